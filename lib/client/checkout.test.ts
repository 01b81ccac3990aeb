import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { Cart } from "./api-types";
import type { FetchLike } from "./attempt";
import {
  newIdempotencyKey,
  submitCheckout,
  type AttemptInfo,
  type AttemptStart,
  type CheckoutResult,
  type SubmitCheckoutOptions,
} from "./checkout";
import { RETRY_POLICY } from "./retry-policy";
import { jsonAnswer, sampleOrder } from "@/lib/testing/browser";

const cart: Cart = { cartId: "cart-1", items: [{ sku: "mug-ceramic-350", quantity: 2 }] };
const KEY = "6f1c2a9e-6b7d-4f57-9b0e-0c8d2d3f4a51";

const order = sampleOrder(cart.cartId);
const json = jsonAnswer;

function problem(status: number, detail: string, extra: Record<string, unknown> = {}) {
  return {
    type: `/problems/${status}`,
    title: `Problem ${status}`,
    status,
    detail,
    ...extra,
  };
}

const created = (headers: Record<string, string> = {}) => json(201, order, headers);
const replayed = () =>
  json(201, order, { "Idempotent-Replayed": "true", "X-Request-Id": "req_replay" });
const inProgress = (retryAfter?: string) =>
  json(409, problem(409, "still running"), retryAfter ? { "Retry-After": retryAfter } : {});

/** A step the fake server takes: answer, fail the connection, or never answer (until the client aborts). */
type Step = Response | Error | "hang" | { after: number; then: Response };

/** A fake fetch that plays `steps` in order and records every request, with the fake clock's time. */
function fakeServer(steps: Step[]) {
  const calls: { at: number; url: string; init: RequestInit; key: string | null; body: string }[] =
    [];
  const fetch: FetchLike = (url, init) => {
    const headers = new Headers(init.headers);
    calls.push({
      at: Date.now(),
      url,
      init,
      key: headers.get("Idempotency-Key"),
      body: String(init.body),
    });
    const step = steps[calls.length - 1];
    if (step === undefined) return Promise.reject(new Error(`unexpected request #${calls.length}`));
    if (step instanceof Error) return Promise.reject(step);
    if (step instanceof Response) return Promise.resolve(step);
    return new Promise<Response>((resolve, reject) => {
      init.signal?.addEventListener("abort", () => reject(init.signal?.reason), { once: true });
      if (step !== "hang") setTimeout(() => resolve(step.then), step.after);
    });
  };
  return { fetch, calls };
}

/** Runs a checkout on the fake clock and lets every timer fire; returns the result, the attempts and when it settled. */
async function run(steps: Step[], options: Partial<SubmitCheckoutOptions> = {}) {
  const server = fakeServer(steps);
  const attempts: AttemptInfo[] = [];
  const starts: AttemptStart[] = [];
  const startedAt = Date.now();
  let settledAt: number | null = null;
  const promise = submitCheckout({
    cart,
    paymentMethod: "pm_card_visa",
    idempotencyKey: KEY,
    fetch: server.fetch,
    random: () => 0.5,
    onAttempt: (attempt) => attempts.push(attempt),
    onAttemptStart: (start) => starts.push(start),
    ...options,
  }).then((result) => {
    settledAt = Date.now();
    return result;
  });
  await vi.runAllTimersAsync();
  const result: CheckoutResult = await promise;
  const times = server.calls.map((call) => call.at - startedAt);
  return {
    result,
    attempts,
    starts,
    calls: server.calls,
    times,
    elapsed: (settledAt ?? NaN) - startedAt,
  };
}

beforeEach(() => {
  vi.useFakeTimers({ now: Date.parse("2025-01-01T00:00:00Z") });
});

afterEach(() => {
  vi.useRealTimers();
});

describe("newIdempotencyKey", () => {
  it("returns a fresh v4 UUID each time", () => {
    const a = newIdempotencyKey();
    expect(a).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(a).not.toBe(newIdempotencyKey());
  });
});

describe("submitCheckout: one attempt", () => {
  it("posts the cart as JSON with the key, credentials and payment method", async () => {
    const { result, calls, attempts } = await run([created({ "X-Request-Id": "req_1" })]);

    expect(result).toEqual({
      kind: "paid",
      order,
      replayed: false,
      attempts: 1,
      requestId: "req_1",
    });
    expect(calls).toHaveLength(1);
    expect(calls[0]?.url).toBe("/api/orders");
    expect(calls[0]?.init.method).toBe("POST");
    expect(calls[0]?.init.credentials).toBe("same-origin");
    expect(new Headers(calls[0]?.init.headers).get("Content-Type")).toBe("application/json");
    // Asked to wait for another attempt that holds the key, inside the attempt's own 6 s.
    expect(new Headers(calls[0]?.init.headers).get("Prefer")).toBe("wait=5");
    expect(calls[0]?.key).toBe(KEY);
    expect(JSON.parse(calls[0]?.body ?? "")).toEqual({
      cartId: "cart-1",
      items: [{ sku: "mug-ceramic-350", quantity: 2 }],
      paymentMethod: "pm_card_visa",
    });
    expect(attempts).toEqual([
      {
        n: 1,
        maxAttempts: 12,
        status: 201,
        failure: null,
        requestId: "req_1",
        replayed: false,
        waited: false,
        durationMs: 0,
        orderId: "ord_123",
        retryInMs: null,
      },
    ]);
  });

  it("reports an answer the server waited for (Preference-Applied) as waited, the first attempt's result replayed", async () => {
    const { result, attempts } = await run([
      json(201, order, { "Idempotent-Replayed": "true", "Preference-Applied": "wait=5" }),
    ]);
    expect(result).toMatchObject({ kind: "paid", replayed: true });
    expect(attempts.map((attempt) => [attempt.status, attempt.replayed, attempt.waited])).toEqual([
      [201, true, true],
    ]);
  });

  it("sends no Idempotency-Key header at all for the lab's broken strategy", async () => {
    const { calls } = await run([created()], {
      idempotencyKey: null,
      url: "/api/lab/unsafe-orders",
    });
    expect(calls[0]?.url).toBe("/api/lab/unsafe-orders");
    expect(new Headers(calls[0]?.init.headers).has("Idempotency-Key")).toBe(false);
    expect(new Headers(calls[0]?.init.headers).has("Prefer")).toBe(false);
  });
});

describe("submitCheckout: the retry schedule", () => {
  it("retries network errors with the same key and body, backing off exponentially with jitter", async () => {
    const lost = () => new TypeError("Failed to fetch");
    const { result, calls, times, attempts } = await run([lost(), lost(), lost(), replayed()]);

    expect(result).toMatchObject({ kind: "paid", replayed: true, attempts: 4 });
    expect(calls.map((call) => call.key)).toEqual([KEY, KEY, KEY, KEY]);
    expect(new Set(calls.map((call) => call.body)).size).toBe(1);
    // random() = 0.5 draws half of each ceiling (500, 1000, 2000 ms): waits of 250, 500, 1000 ms.
    expect(times).toEqual([0, 250, 750, 1750]);
    expect(attempts.map((a) => [a.n, a.status, a.failure, a.retryInMs])).toEqual([
      [1, null, "network", 250],
      [2, null, "network", 500],
      [3, null, "network", 1000],
      [4, 201, null, null],
    ]);
  });

  it("draws each wait afresh from [0, ceiling): full jitter", async () => {
    const draws = [0, 0.999, 0.25];
    const { times } = await run(
      [new TypeError("x"), new TypeError("x"), new TypeError("x"), created()],
      {
        random: () => draws.shift() ?? 0,
      },
    );
    // Waits 0 (of 500), 999 (of 1000), 500 (of 2000).
    expect(times).toEqual([0, 0, 999, 1499]);
  });

  it("retries a network error the browser words differently (any rejected fetch is a lost answer)", async () => {
    const { result, calls } = await run([
      new TypeError("Load failed"),
      new Error("socket hang up"),
      created(),
    ]);
    expect(result.kind).toBe("paid");
    expect(calls).toHaveLength(3);
  });

  it("honours Retry-After on 409 as the least wait, and reports the replay", async () => {
    const { result, times, attempts } = await run([inProgress("2"), inProgress("1"), replayed()]);

    expect(times).toEqual([0, 2000, 3000]);
    expect(result).toEqual({
      kind: "paid",
      order,
      replayed: true,
      attempts: 3,
      requestId: "req_replay",
    });
    expect(attempts.map((a) => [a.status, a.replayed, a.retryInMs])).toEqual([
      [409, false, 2000],
      [409, false, 1000],
      [201, true, null],
    ]);
  });

  it("times out an attempt that does not answer, and the retry gets 409 and then the replay (slow network)", async () => {
    // The first attempt is still running at the server when the client gives up on it.
    const { result, attempts, times, calls } = await run(["hang", inProgress("1"), replayed()]);

    expect(result).toMatchObject({ kind: "paid", replayed: true, attempts: 3 });
    expect(calls.map((call) => call.key)).toEqual([KEY, KEY, KEY]);
    expect(calls[0]?.init.signal?.aborted).toBe(true);
    expect(attempts[0]).toMatchObject({
      n: 1,
      status: null,
      failure: "timeout",
      durationMs: RETRY_POLICY.attemptTimeoutMs,
      retryInMs: 250,
    });
    expect(times).toEqual([0, 6250, 7250]);
  });

  it("counts a response that arrives after the timeout as a timeout", async () => {
    const { attempts } = await run([{ after: 6001, then: created() }, replayed()]);
    expect(attempts[0]).toMatchObject({ failure: "timeout", status: null });
  });

  it("keeps a slow answer that arrives inside the timeout", async () => {
    const { result, attempts } = await run([
      { after: 5999, then: created({ "X-Request-Id": "req_slow" }) },
    ]);
    expect(result).toMatchObject({ kind: "paid", attempts: 1, requestId: "req_slow" });
    expect(attempts[0]?.durationMs).toBe(5999);
  });

  it("retries a success whose body was cut off, and takes the replay", async () => {
    const truncated = new Response('{"id":"ord_1', {
      status: 201,
      headers: { "Content-Type": "application/json" },
    });
    const { result, calls } = await run([truncated, replayed()]);
    expect(calls.map((call) => call.key)).toEqual([KEY, KEY]);
    expect(result).toMatchObject({ kind: "paid", replayed: true, attempts: 2 });
  });

  it("treats an answer whose body breaks off as lost (the status line alone is no answer)", async () => {
    const broken = new Response(
      new ReadableStream({ start: (controller) => controller.error(new Error("dropped")) }),
      { status: 200 },
    );
    const { result, attempts } = await run([broken, replayed()]);
    expect(attempts[0]).toMatchObject({ status: null, failure: "network", retryInMs: 250 });
    expect(result).toMatchObject({ kind: "paid", replayed: true, attempts: 2 });
  });

  it("announces each attempt before sending it", async () => {
    const { starts } = await run([inProgress("1"), created()]);
    expect(starts).toEqual([
      { n: 1, maxAttempts: 12 },
      { n: 2, maxAttempts: 12 },
    ]);
  });
});

describe("submitCheckout: status classes", () => {
  it.each([409, 429, 500, 502, 503, 504])("retries a %i", async (status) => {
    const { result, calls } = await run([
      json(status, problem(status, `status ${status}`)),
      created(),
    ]);
    expect(calls).toHaveLength(2);
    expect(result.kind).toBe("paid");
  });

  it.each([400, 401, 413, 415, 422])(
    "does not retry a %i, and says nothing was charged",
    async (status) => {
      const { result, calls, times } = await run([
        json(status, problem(status, `bad request ${status}`)),
        created(),
      ]);
      expect(calls).toHaveLength(1);
      expect(times).toEqual([0]);
      expect(result).toMatchObject({
        kind: "failed",
        outcomeUnknown: false,
        status,
        message: `bad request ${status}`,
        attempts: 1,
      });
    },
  );

  it("sends the same key again after a 401 for more than one session cookie, whose answer removed the extra one", async () => {
    const severalSessions = {
      ...problem(401, "more than one session cookie"),
      type: "/problems/several-session-cookies",
    };
    const { result, calls } = await run([json(401, severalSessions), created()]);

    expect(calls).toHaveLength(2);
    expect(new Set(calls.map((call) => call.key))).toEqual(new Set([KEY]));
    expect(result).toMatchObject({ kind: "paid", attempts: 2 });
  });

  it("returns a decline on 402 without retrying", async () => {
    const declined = problem(402, "Your card was declined.", { declineCode: "generic_decline" });
    const { result, calls } = await run(
      [json(402, declined, { "X-Request-Id": "req_d" }), created()],
      { paymentMethod: "pm_card_chargeDeclined" },
    );

    expect(calls).toHaveLength(1);
    expect(result.kind).toBe("declined");
    if (result.kind !== "declined") throw new Error("unreachable");
    expect(result.problem).toMatchObject({
      detail: "Your card was declined.",
      declineCode: "generic_decline",
    });
    expect(result.requestId).toBe("req_d");
    expect(JSON.parse(calls[0]?.body ?? "").paymentMethod).toBe("pm_card_chargeDeclined");
  });

  it("uses the status line when an error body is not a problem", async () => {
    const { result } = await run([
      new Response("nope", { status: 400, statusText: "Bad Request" }),
    ]);
    expect(result).toMatchObject({
      kind: "failed",
      outcomeUnknown: false,
      message: "The server answered 400 Bad Request.",
    });
  });
});

describe("submitCheckout: giving up", () => {
  it("backs off under Retry-After: 1 and stops after the 12th attempt, with the outcome unknown", async () => {
    const busy = Array.from({ length: 12 }, () => inProgress("1"));
    const { result, calls, attempts, elapsed } = await run([...busy, created()]);

    expect(calls).toHaveLength(12);
    expect(result).toMatchObject({
      kind: "failed",
      outcomeUnknown: true,
      status: 409,
      attempts: 12,
      message: "still running (12 attempts).",
    });
    // max(Retry-After, half the backoff ceiling): 1, 1, 1, 2, then 4 s (the 8 s cap, halved).
    expect(attempts.map((a) => a.retryInMs)).toEqual([
      1000,
      1000,
      1000,
      2000,
      4000,
      4000,
      4000,
      4000,
      4000,
      4000,
      4000,
      null,
    ]);
    // With this draw the 409s are retried for 33 s: about as long as a key is held for its 30 s lease after a crash.
    expect(elapsed).toBe(33_000);
  });

  it("gives up on repeated network errors with a message", async () => {
    const { result, calls } = await run([new TypeError("x"), new TypeError("x")], {
      policy: { maxAttempts: 2 },
    });
    expect(calls).toHaveLength(2);
    expect(result).toMatchObject({
      kind: "failed",
      outcomeUnknown: true,
      problem: null,
      status: null,
      attempts: 2,
    });
    if (result.kind !== "failed") throw new Error("unreachable");
    expect(result.message).toBe("Could not reach the server (2 attempts).");
  });

  it("starts no attempt after the 60 s budget, however many attempts are left", async () => {
    // Retry-After: 15 puts attempts at 0, 15, 30 and 45 s; the next would start at 60 s, outside the budget.
    const busy = Array.from({ length: 20 }, () => inProgress("15"));
    const { result, times, elapsed } = await run(busy, { policy: { maxAttempts: 20 } });

    expect(times).toEqual([0, 15_000, 30_000, 45_000]);
    expect(result).toMatchObject({ kind: "failed", outcomeUnknown: true, attempts: 4 });
    // It gives up as soon as it knows, rather than waiting 15 s only to give up.
    expect(elapsed).toBe(45_000);
  });

  it("stops in the first half of the key's life when the server keeps keys for less than the budget", async () => {
    // Kept 40 s: the last attempt must end by 20 s, so none starts after
    // 14 s (an attempt may take 6 s). Retry-After: 5 puts attempts at 0, 5
    // and 10 s; the next, at 15 s, is not made.
    const shortLived = { "Retry-After": "5", "Idempotency-Key-Policy": "retention=40, lease=5" };
    const busy = Array.from({ length: 12 }, () => json(409, problem(409, "busy"), shortLived));
    const { result, times } = await run(busy);
    expect(times).toEqual([0, 5_000, 10_000]);
    expect(result).toMatchObject({ kind: "failed", outcomeUnknown: true, attempts: 3 });
  });

  it("reports the attempts really made when p-retry's time budget stops it early", async () => {
    // The page is frozen for 70 s right after the 2nd attempt's answer (a
    // throttled background tab): the wait the policy chose ends outside the
    // 60 s budget, so p-retry gives up before a 3rd attempt, with 10 left.
    const busy = Array.from({ length: 12 }, () => inProgress("1"));
    const reported: number[] = [];
    const { result, calls } = await run(busy, {
      onAttempt: (attempt) => {
        reported.push(attempt.n);
        if (attempt.n === 2) vi.advanceTimersByTime(70_000);
      },
    });

    expect(calls).toHaveLength(2);
    expect(reported).toEqual([1, 2]);
    expect(result).toMatchObject({
      kind: "failed",
      outcomeUnknown: true,
      status: 409,
      attempts: 2,
      message: "still running (2 attempts).",
    });
  });

  it("ends within budget plus one attempt timeout even when every attempt hangs", async () => {
    const hangs: Step[] = Array.from({ length: 50 }, () => "hang" as const);
    const { result, times, elapsed } = await run(hangs, {
      policy: { maxAttempts: 50 },
      random: () => 0.999,
    });

    expect(result).toMatchObject({
      kind: "failed",
      outcomeUnknown: true,
      message: expect.stringMatching(/^The server did not answer in time/),
    });
    expect(Math.max(...times)).toBeLessThan(RETRY_POLICY.budgetMs);
    expect(elapsed).toBeLessThanOrEqual(RETRY_POLICY.budgetMs + RETRY_POLICY.attemptTimeoutMs);
  });
});
