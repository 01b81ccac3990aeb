import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { IDEMPOTENCY_KEY_HEADER, RETRY_AFTER_HEADER } from "@/lib/http/headers";
import { jsonAnswer } from "@/lib/testing/browser";
import type { FetchLike } from "./attempt";
import { refundsUrl, submitRefund, type RefundAttempt } from "./refund";

const ORDER_ID = "4d1f2a8e-6b3c-4e5d-9f70-1a2b3c4d5e6f";
const KEY = "0b5e7c1d-2f43-4a8e-b9d6-58c1e0a7f3b2";

const refund = {
  id: "9a4d2b7e-31c5-4f08-8e6a-d2b5c7f1e093",
  object: "refund",
  orderId: ORDER_ID,
  status: "succeeded",
  amount: 1450,
  currency: "usd",
  providerRefundId: "re_1",
  createdAt: "2026-12-06T02:04:11.208Z",
};
const problem = (status: number, detail: string) => ({
  type: `/problems/${status}`,
  title: `Problem ${status}`,
  status,
  detail,
});

type Step = Response | Error;

/** A fake server that plays `steps` in order, recording each request. */
function fakeServer(steps: Step[]) {
  const calls: { url: string; key: string | null; body: string; method: string }[] = [];
  const fetch: FetchLike = (url, init) => {
    calls.push({
      url,
      key: new Headers(init.headers).get(IDEMPOTENCY_KEY_HEADER),
      body: String(init.body),
      method: String(init.method),
    });
    const step = steps[calls.length - 1];
    if (step === undefined) return Promise.reject(new Error(`unexpected request #${calls.length}`));
    return step instanceof Error ? Promise.reject(step) : Promise.resolve(step);
  };
  return { fetch, calls };
}

async function send(steps: Step[], amount: number | null = null) {
  const server = fakeServer(steps);
  const attempts: RefundAttempt[] = [];
  const result = submitRefund({
    orderId: ORDER_ID,
    amount,
    idempotencyKey: KEY,
    fetch: server.fetch,
    random: () => 0.5,
    onAttempt: (attempt) => attempts.push(attempt),
  });
  await vi.runAllTimersAsync();
  return { result: await result, calls: server.calls, attempts };
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe("submitRefund", () => {
  it("posts to the order's refunds with the key, and no amount for all that is left", async () => {
    const { result, calls } = await send([jsonAnswer(201, refund)]);

    expect(calls).toEqual([
      { url: `/api/orders/${ORDER_ID}/refunds`, key: KEY, body: "{}", method: "POST" },
    ]);
    expect(result).toEqual({ kind: "refunded", refund, replayed: false, attempts: 1 });
  });

  it("sends the amount in minor units when one was asked for", async () => {
    const { calls } = await send([jsonAnswer(201, refund)], 1450);
    expect(calls[0]!.body).toBe('{"amount":1450}');
  });

  it("retries a lost connection, a 409 and a 503 under the same key and body, and takes the replay", async () => {
    const { result, calls, attempts } = await send(
      [
        new TypeError("Failed to fetch"),
        jsonAnswer(409, problem(409, "still running"), { [RETRY_AFTER_HEADER]: "1" }),
        jsonAnswer(503, problem(503, "provider slow"), { [RETRY_AFTER_HEADER]: "1" }),
        jsonAnswer(201, refund, { "Idempotent-Replayed": "true" }),
      ],
      700,
    );

    expect(calls.map((call) => [call.key, call.body])).toEqual(
      Array.from({ length: 4 }, () => [KEY, '{"amount":700}']),
    );
    expect(attempts.map((attempt) => [attempt.status, attempt.failure])).toEqual([
      [null, "network"],
      [409, null],
      [503, null],
      [201, null],
    ]);
    // Retry-After is the least wait before the next attempt.
    expect(attempts[1]!.retryInMs).toBeGreaterThanOrEqual(1000);
    expect(result).toEqual({ kind: "refunded", refund, replayed: true, attempts: 4 });
  });

  it("hands over a 422's detail as the server wrote it, without retrying", async () => {
    const detail = "Order x has 3600 of 5050 usd (minor units) left to refund.";
    const { result, calls } = await send([jsonAnswer(422, problem(422, detail))], 5050);

    expect(calls).toHaveLength(1);
    expect(result).toMatchObject({ kind: "refused", problem: { status: 422, detail } });
  });

  it("retries a success whose body is not a refund (cut off), and takes the replay", async () => {
    const { result, calls } = await send([
      new Response('{"object":"ref', { status: 201 }),
      jsonAnswer(201, refund, { "Idempotent-Replayed": "true" }),
    ]);
    expect(calls).toHaveLength(2);
    expect(result).toMatchObject({ kind: "refunded", replayed: true });
  });

  it("gives up with the outcome unknown when no answer ever comes", async () => {
    const { result, calls } = await send(
      Array.from({ length: 12 }, () => new TypeError("Failed to fetch")),
    );
    expect(calls.every((call) => call.key === KEY)).toBe(true);
    expect(result).toMatchObject({
      kind: "failed",
      outcomeUnknown: true,
      message: expect.stringMatching(/^Could not reach the server \(\d+ attempts\)\.$/),
    });
  });

  it("puts the order's id into the path as one segment", () => {
    expect(refundsUrl("a/b")).toBe("/api/orders/a%2Fb/refunds");
  });
});
