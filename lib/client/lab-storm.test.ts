import { describe, expect, it } from "vitest";
import {
  countStatuses,
  fireStorm,
  peakOverlap,
  type StormTiming,
  type TimedRequest,
} from "@/lib/client/lab-storm";
import type { StormRequest } from "@/lib/lab/storms";

const request: StormRequest = {
  method: "POST",
  path: "/api/orders",
  headers: { "Content-Type": "application/json", "Idempotency-Key": "k" },
  body: {
    cartId: "cart_1",
    items: [{ sku: "mug-ceramic-350", quantity: 1 }],
    paymentMethod: "pm_card_visa",
  },
};

function fakeTiming(entries: TimedRequest[]): StormTiming & { reserved: number } {
  let clock = 0;
  return {
    reserved: 0,
    now: () => (clock += 10),
    entriesFor: () => entries,
    reserve(count) {
      this.reserved = count;
    },
  };
}

describe("peakOverlap", () => {
  it("counts the most intervals that share a moment", () => {
    expect(peakOverlap([])).toBe(0);
    expect(peakOverlap([{ start: 0, end: 10 }])).toBe(1);
    expect(
      peakOverlap([
        { start: 0, end: 10 },
        { start: 5, end: 15 },
        { start: 6, end: 7 },
        { start: 20, end: 30 },
      ]),
    ).toBe(3);
  });

  it("does not count one that ends as another starts", () => {
    expect(
      peakOverlap([
        { start: 0, end: 10 },
        { start: 10, end: 20 },
      ]),
    ).toBe(1);
  });
});

describe("countStatuses", () => {
  it("groups answers, most common first", () => {
    expect(countStatuses(["409", "201", "409", "201 replayed", "409", "network error"])).toEqual([
      { label: "409", count: 3 },
      { label: "201", count: 1 },
      { label: "201 replayed", count: 1 },
      { label: "network error", count: 1 },
    ]);
  });
});

describe("fireStorm", () => {
  it("starts every request before any answer arrives, sends the storm's request as given, and reports what came back", async () => {
    const sent: { path: string; init: RequestInit }[] = [];
    const answers: ((response: Response) => void)[] = [];
    const fetch = (path: string, init: RequestInit) => {
      sent.push({ path, init });
      return new Promise<Response>((resolve) => answers.push(resolve));
    };
    const timing = fakeTiming([
      { requestStart: 100, responseEnd: 200, protocol: "h2" },
      { requestStart: 110, responseEnd: 190, protocol: "h2" },
      { requestStart: 150, responseEnd: 300, protocol: "http/1.1" },
    ]);
    const storm = fireStorm(fetch, timing, "storm-1", request, 3);
    // All three are on their way before the first answer.
    expect(sent).toHaveLength(3);
    expect(timing.reserved).toBe(3);
    for (const { path, init } of sent) {
      expect(path).toBe("/api/orders");
      expect(init).toMatchObject({
        method: "POST",
        credentials: "same-origin",
        headers: request.headers,
        body: JSON.stringify(request.body),
      });
    }
    answers[0]!(new Response("{}", { status: 201 }));
    answers[1]!(new Response("{}", { status: 409 }));
    answers[2]!(new Response("{}", { status: 201, headers: { "Idempotent-Replayed": "true" } }));

    const observation = await storm;
    expect(observation).toMatchObject({
      stormId: "storm-1",
      sent: 3,
      peakInFlight: 3,
      protocol: "h2",
    });
    expect(observation.statuses).toEqual([
      { label: "201", count: 1 },
      { label: "201 replayed", count: 1 },
      { label: "409", count: 1 },
    ]);
  });

  it("counts a request that got no answer as a network error, and reports no peak without timings", async () => {
    const fetch = () => Promise.reject(new TypeError("Failed to fetch"));
    const observation = await fireStorm(fetch, fakeTiming([]), "storm-2", request, 2);
    expect(observation.statuses).toEqual([{ label: "network error", count: 2 }]);
    expect(observation.peakInFlight).toBeNull();
    expect(observation.protocol).toBeNull();
  });
});
