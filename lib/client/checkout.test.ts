import { describe, expect, it } from "vitest";
import { newIdempotencyKey, retryDelayMs, submitCheckout, type AttemptInfo, type Cart, type FetchLike } from "./checkout";

const cart: Cart = { cartId: "cart-1", items: [{ sku: "mug-ceramic-350", quantity: 2 }] };
const KEY = "6f1c2a9e-6b7d-4f57-9b0e-0c8d2d3f4a51";

const order = {
  id: "ord_123",
  object: "order",
  status: "paid",
  cartId: "cart-1",
  currency: "usd",
  amount: 3600,
  items: [{ sku: "mug-ceramic-350", name: "Stoneware Mug", unitAmount: 1800, quantity: 2, amount: 3600 }],
  payment: { id: "pay_1", status: "succeeded", paymentMethod: "pm_card_visa" },
  createdAt: "2025-01-01T00:00:00.000Z",
};

function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  const contentType = status >= 400 ? "application/problem+json" : "application/json";
  return new Response(JSON.stringify(body), { status, headers: { "Content-Type": contentType, ...headers } });
}

function problem(status: number, detail: string, extra: Record<string, unknown> = {}) {
  return { type: `urn:oncepay:problem:${status}`, title: `Problem ${status}`, status, detail, ...extra };
}

type Step = Response | Error;

/** A fake fetch that answers with `steps` in order and records every request it saw. */
function fakeFetch(steps: Step[]) {
  const calls: { url: string; init: RequestInit; key: string | null; body: string }[] = [];
  const fetch: FetchLike = async (url, init) => {
    const headers = new Headers(init.headers);
    calls.push({ url, init, key: headers.get("Idempotency-Key"), body: String(init.body) });
    const step = steps[calls.length - 1];
    if (step === undefined) throw new Error(`unexpected request #${calls.length}`);
    if (step instanceof Error) throw step;
    return step;
  };
  return { fetch, calls };
}

function recorder() {
  const waits: number[] = [];
  const sleep = async (ms: number) => {
    waits.push(ms);
  };
  return { waits, sleep };
}

describe("newIdempotencyKey", () => {
  it("returns a fresh v4 UUID each time", () => {
    const a = newIdempotencyKey();
    const b = newIdempotencyKey();
    expect(a).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(a).not.toBe(b);
  });
});

describe("submitCheckout", () => {
  it("posts the cart as JSON with the key, credentials and payment method", async () => {
    const { fetch, calls } = fakeFetch([json(201, order, { "X-Request-Id": "req_1" })]);
    const result = await submitCheckout({ cart, paymentMethod: "pm_card_visa", key: KEY, fetch });

    expect(result).toEqual({ kind: "paid", order, replayed: false, attempts: 1, requestId: "req_1" });
    expect(calls).toHaveLength(1);
    expect(calls[0]?.url).toBe("/api/orders");
    expect(calls[0]?.init.method).toBe("POST");
    expect(calls[0]?.init.credentials).toBe("same-origin");
    expect(new Headers(calls[0]?.init.headers).get("Content-Type")).toBe("application/json");
    expect(calls[0]?.key).toBe(KEY);
    expect(JSON.parse(calls[0]?.body ?? "")).toEqual({
      cartId: "cart-1",
      items: [{ sku: "mug-ceramic-350", quantity: 2 }],
      paymentMethod: "pm_card_visa",
    });
  });

  it("retries a network error with the same key and body, then succeeds", async () => {
    const { fetch, calls } = fakeFetch([new TypeError("Failed to fetch"), new TypeError("Failed to fetch"), json(201, order)]);
    const { waits, sleep } = recorder();
    const attempts: AttemptInfo[] = [];

    const result = await submitCheckout({
      cart, paymentMethod: "pm_card_visa", key: KEY, fetch, sleep, random: () => 1,
      onAttempt: (attempt) => attempts.push(attempt),
    });

    expect(result.kind).toBe("paid");
    expect(result.attempts).toBe(3);
    expect(calls.map((call) => call.key)).toEqual([KEY, KEY, KEY]);
    expect(new Set(calls.map((call) => call.body)).size).toBe(1);
    // Full-jitter backoff with random() = 1 hits the ceiling: 250 ms, then 500 ms.
    expect(waits).toEqual([250, 500]);
    expect(attempts.map((a) => [a.n, a.status, a.retryInMs])).toEqual([
      [1, "network error", 250],
      [2, "network error", 500],
      [3, 201, null],
    ]);
  });

  it("retries 409 honouring Retry-After, and reports the replay", async () => {
    const inFlight = () => json(409, problem(409, "still running"), { "Retry-After": "2", "X-Request-Id": "req_a" });
    const { fetch, calls } = fakeFetch([
      inFlight(),
      json(409, problem(409, "still running"), { "Retry-After": "1" }),
      json(201, order, { "Idempotent-Replayed": "true", "X-Request-Id": "req_c" }),
    ]);
    const { waits, sleep } = recorder();
    const attempts: AttemptInfo[] = [];

    const result = await submitCheckout({
      cart, paymentMethod: "pm_card_visa", key: KEY, fetch, sleep,
      onAttempt: (attempt) => attempts.push(attempt),
    });

    expect(waits).toEqual([2000, 1000]);
    expect(calls.map((call) => call.key)).toEqual([KEY, KEY, KEY]);
    expect(result).toEqual({ kind: "paid", order, replayed: true, attempts: 3, requestId: "req_c" });
    expect(attempts[0]).toEqual({ n: 1, maxAttempts: 4, status: 409, requestId: "req_a", replayed: false, retryInMs: 2000 });
    expect(attempts[2]?.replayed).toBe(true);
  });

  it("backs off exponentially, capped at 2 s, on a 409 without Retry-After", async () => {
    const busy = () => json(409, problem(409, "still running"));
    const { fetch } = fakeFetch([busy(), busy(), busy(), busy(), busy(), json(201, order)]);
    const { waits, sleep } = recorder();

    const result = await submitCheckout({ cart, paymentMethod: "pm_card_visa", key: KEY, fetch, sleep, random: () => 1, maxAttempts: 6 });

    expect(result.kind).toBe("paid");
    expect(waits).toEqual([250, 500, 1000, 2000, 2000]);
  });

  it("retries a 503 and then succeeds", async () => {
    const { fetch, calls } = fakeFetch([json(503, problem(503, "database unavailable"), { "Retry-After": "1" }), json(201, order)]);
    const { waits, sleep } = recorder();

    const result = await submitCheckout({ cart, paymentMethod: "pm_card_visa", key: KEY, fetch, sleep });

    expect(result.kind).toBe("paid");
    expect(calls).toHaveLength(2);
    expect(waits).toEqual([1000]);
  });

  it("returns a decline on 402 without retrying", async () => {
    const declined = problem(402, "Your card was declined.", { declineCode: "generic_decline" });
    const { fetch, calls } = fakeFetch([json(402, declined, { "X-Request-Id": "req_d" }), json(201, order)]);
    const { waits, sleep } = recorder();

    const result = await submitCheckout({ cart, paymentMethod: "pm_card_chargeDeclined", key: KEY, fetch, sleep });

    expect(calls).toHaveLength(1);
    expect(waits).toEqual([]);
    expect(result.kind).toBe("declined");
    if (result.kind !== "declined") throw new Error("unreachable");
    expect(result.problem.detail).toBe("Your card was declined.");
    expect(result.problem.declineCode).toBe("generic_decline");
    expect(result.requestId).toBe("req_d");
    expect(JSON.parse(calls[0]?.body ?? "").paymentMethod).toBe("pm_card_chargeDeclined");
  });

  it.each([400, 401, 413, 415, 422])("does not retry a %i", async (status) => {
    const { fetch, calls } = fakeFetch([json(status, problem(status, `bad request ${status}`)), json(201, order)]);
    const { waits, sleep } = recorder();

    const result = await submitCheckout({ cart, paymentMethod: "pm_card_visa", key: KEY, fetch, sleep });

    expect(calls).toHaveLength(1);
    expect(waits).toEqual([]);
    expect(result).toMatchObject({ kind: "failed", status, message: `bad request ${status}`, attempts: 1 });
  });

  it("gives up after maxAttempts and reports the last failure", async () => {
    const busy = () => json(409, problem(409, "still running"), { "Retry-After": "1" });
    const { fetch, calls } = fakeFetch([busy(), busy(), busy(), busy(), json(201, order)]);
    const { waits, sleep } = recorder();
    const attempts: AttemptInfo[] = [];

    const result = await submitCheckout({
      cart, paymentMethod: "pm_card_visa", key: KEY, fetch, sleep,
      onAttempt: (attempt) => attempts.push(attempt),
    });

    expect(calls).toHaveLength(4);
    expect(waits).toEqual([1000, 1000, 1000]);
    expect(result).toMatchObject({ kind: "failed", status: 409, message: "still running", attempts: 4 });
    expect(attempts.at(-1)?.retryInMs).toBeNull();
  });

  it("gives up on repeated network errors with a message", async () => {
    const { fetch, calls } = fakeFetch([new TypeError("x"), new TypeError("x")]);
    const { sleep } = recorder();

    const result = await submitCheckout({ cart, paymentMethod: "pm_card_visa", key: KEY, fetch, sleep, maxAttempts: 2 });

    expect(calls).toHaveLength(2);
    expect(result).toMatchObject({ kind: "failed", problem: null, status: null, attempts: 2 });
    if (result.kind !== "failed") throw new Error("unreachable");
    expect(result.message).toMatch(/could not reach the server/i);
  });

  it("retries a success whose body was cut off, and takes the replay", async () => {
    const truncated = new Response('{"id":"ord_1', { status: 201, headers: { "Content-Type": "application/json" } });
    const { fetch, calls } = fakeFetch([truncated, json(201, order, { "Idempotent-Replayed": "true" })]);
    const { sleep } = recorder();

    const result = await submitCheckout({ cart, paymentMethod: "pm_card_visa", key: KEY, fetch, sleep });

    expect(calls.map((call) => call.key)).toEqual([KEY, KEY]);
    expect(result).toMatchObject({ kind: "paid", replayed: true, attempts: 2 });
  });
});

describe("retryDelayMs", () => {
  it("reads Retry-After as seconds or an HTTP date, and caps it", () => {
    const now = Date.parse("2025-01-01T00:00:00Z");
    expect(retryDelayMs(1, "3", () => 0, now)).toBe(3000);
    expect(retryDelayMs(1, "Wed, 01 Jan 2025 00:00:05 GMT", () => 0, now)).toBe(5000);
    expect(retryDelayMs(1, "3600", () => 0, now)).toBe(15_000);
  });

  it("uses full jitter below the backoff ceiling when there is no usable Retry-After", () => {
    expect(retryDelayMs(3, null, () => 0.5)).toBe(500);
    expect(retryDelayMs(3, "soon", () => 0)).toBe(0);
    expect(retryDelayMs(10, null, () => 1)).toBe(2000);
  });
});
