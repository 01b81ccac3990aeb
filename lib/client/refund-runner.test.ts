import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { IDEMPOTENCY_KEY_HEADER, KEY_POLICY_HEADER, RETRY_AFTER_HEADER } from "@/lib/http/headers";
import { MemoryStorage, jsonAnswer } from "@/lib/testing/browser";
import type { FetchLike } from "./attempt";
import { AUTO_RESUME_WINDOW_MS } from "./intent-store";
import { submitRefund } from "./refund";
import { createRefundIntentStore } from "./refund-intent";
import { createRefundRunner, IDLE_REFUND, type RefundPhase } from "./refund-runner";

const ORDER_ID = "4d1f2a8e-6b3c-4e5d-9f70-1a2b3c4d5e6f";
const refund = {
  id: "9a4d2b7e-31c5-4f08-8e6a-d2b5c7f1e093",
  object: "refund",
  orderId: ORDER_ID,
  status: "succeeded",
  amount: 5050,
  currency: "usd",
  providerRefundId: "re_1",
  createdAt: "2026-12-06T02:04:11.208Z",
};
const refunded = (headers: Record<string, string> = {}) => jsonAnswer(201, refund, headers);
const inProgress = () =>
  jsonAnswer(
    409,
    { title: "Conflict", status: 409, detail: "still running" },
    {
      [RETRY_AFTER_HEADER]: "1",
    },
  );
const exceeds = (detail: string) =>
  jsonAnswer(422, {
    type: "/problems/refund-exceeds-balance",
    title: "x",
    status: 422,
    detail,
  });

/** A step the fake server takes: answer now, answer later, fail the connection, or never answer. */
type Step = Response | Error | { after: number; then: Response } | "never";

function fakeServer(steps: Step[], otherwise?: () => Step) {
  const calls: { key: string | null; body: string }[] = [];
  const fetch: FetchLike = (_url, init) => {
    calls.push({
      key: new Headers(init.headers).get(IDEMPOTENCY_KEY_HEADER),
      body: String(init.body),
    });
    const step = steps[calls.length - 1] ?? otherwise?.();
    if (step === undefined) return Promise.reject(new Error(`unexpected request #${calls.length}`));
    if (step === "never") return new Promise<Response>(() => {});
    if (step instanceof Error) return Promise.reject(step);
    if (step instanceof Response) return Promise.resolve(step);
    return new Promise<Response>((resolve) => setTimeout(() => resolve(step.then), step.after));
  };
  return { fetch, calls };
}

/** One order's control on a page over `storage` (shared across "reloads"), sending to a fake server. */
function control(server: ReturnType<typeof fakeServer>, storage: Storage = new MemoryStorage()) {
  const store = createRefundIntentStore(storage);
  const runner = createRefundRunner({
    orderId: ORDER_ID,
    store,
    submit: (options) => submitRefund({ ...options, fetch: server.fetch, random: () => 0.5 }),
  });
  const phases: RefundPhase[] = [];
  runner.subscribe(() => phases.push(runner.getSnapshot().phase));
  const onRefunded = vi.fn();
  runner.onRefunded(onRefunded);
  return { runner, store, storage, phases, onRefunded, calls: server.calls };
}

beforeEach(() => {
  vi.useFakeTimers({ now: Date.parse("2026-12-06T12:00:00Z") });
});
afterEach(() => {
  vi.useRealTimers();
});

describe("the refund control: one press, one key", () => {
  it("saves the intent with its key before the first attempt, and forgets it once refunded", async () => {
    const storage = new MemoryStorage();
    const store = createRefundIntentStore(storage);
    let savedWhenSent: string | undefined;
    const server = fakeServer([refunded()]);
    const fetch: FetchLike = (url, init) => {
      savedWhenSent = store.load(ORDER_ID)?.idempotencyKey;
      return server.fetch(url, init);
    };
    const { runner, onRefunded, calls } = control({ fetch, calls: server.calls }, storage);

    expect(runner.refund(null)).toBe(true);
    await vi.runAllTimersAsync();

    expect(calls[0]!.key).toMatch(/^[0-9a-f-]{36}$/);
    expect(savedWhenSent).toBe(calls[0]!.key);
    expect(runner.getSnapshot()).toMatchObject({
      key: calls[0]!.key,
      phase: { kind: "refunded", replayed: false, refund },
    });
    expect(onRefunded).toHaveBeenCalledWith(refund);
    expect(store.load(ORDER_ID)).toBeNull();
  });

  it("ignores a second press while the first is in flight: a double-click sends one refund", async () => {
    const { runner, calls } = control(fakeServer([{ after: 300, then: refunded() }]));

    expect(runner.refund(null)).toBe(true);
    expect(runner.refund(null)).toBe(false);
    expect(runner.refund(1200)).toBe(false);
    await vi.runAllTimersAsync();

    expect(calls).toHaveLength(1);
  });

  it("retries a lost connection, a 409 and a 503 under the one key it made at the press", async () => {
    const unavailable = jsonAnswer(
      503,
      { title: "x", status: 503, detail: "later" },
      {
        [RETRY_AFTER_HEADER]: "1",
      },
    );
    const { runner, phases, calls } = control(
      fakeServer([
        new TypeError("Failed to fetch"),
        inProgress(),
        unavailable,
        refunded({ "Idempotent-Replayed": "true" }),
      ]),
    );

    runner.refund(700);
    await vi.runAllTimersAsync();

    expect(new Set(calls.map((call) => call.key)).size).toBe(1);
    expect(calls.every((call) => call.body === '{"amount":700}')).toBe(true);
    expect(phases.filter((phase) => phase.kind === "waiting")).toHaveLength(3);
    expect(runner.getSnapshot().phase).toMatchObject({ kind: "refunded", replayed: true });
  });

  it("after giving up with the outcome unknown, the next press of the same amount resends the same key", async () => {
    const { runner, store, calls } = control(
      fakeServer([], () => new TypeError("Failed to fetch")),
    );

    runner.refund(700);
    await vi.runAllTimersAsync();
    const key = calls[0]!.key;
    expect(runner.getSnapshot()).toMatchObject({
      phase: { kind: "unconfirmed" },
      unfinishedAmount: 700,
    });
    expect(store.load(ORDER_ID)).toMatchObject({ idempotencyKey: key, state: "unresolved" });

    const before = calls.length;
    runner.refund(700);
    await vi.runAllTimersAsync();
    expect(calls.slice(before).every((call) => call.key === key)).toBe(true);
  });

  it("keeps with the intent how long the server keeps its key, and forgets it after half of that", async () => {
    const held = () =>
      jsonAnswer(
        409,
        { title: "Conflict", status: 409, detail: "still running" },
        { [RETRY_AFTER_HEADER]: "1", [KEY_POLICY_HEADER]: "retention=600, lease=30" },
      );
    const { runner, store } = control(fakeServer([], held));
    runner.refund(700);
    await vi.runAllTimersAsync();
    expect(store.load(ORDER_ID)).toMatchObject({ state: "unresolved", keyRetentionSeconds: 600 });
    vi.advanceTimersByTime(300_001);
    expect(store.load(ORDER_ID)).toBeNull();
  });

  it("makes a new key for a press after the last refund ended, and shows a 422 as the server words it", async () => {
    const detail =
      "Order x is refunded in full (5050 usd in minor units): nothing was refunded now.";
    const { runner, calls, store } = control(fakeServer([refunded(), exceeds(detail)]));

    runner.refund(null);
    await vi.runAllTimersAsync();
    runner.refund(null);
    await vi.runAllTimersAsync();

    expect(calls).toHaveLength(2);
    expect(calls[1]!.key).not.toBe(calls[0]!.key);
    expect(runner.getSnapshot().phase).toEqual({ kind: "refused", detail, status: 422 });
    // A refusal ends the intent as a refund does.
    expect(store.load(ORDER_ID)).toBeNull();
  });
});

describe("the refund control after a reload", () => {
  it("resumes an intent a reload cut short moments ago, with its key, and takes the replay", async () => {
    const storage = new MemoryStorage();
    const first = control(fakeServer(["never"]), storage);
    first.runner.refund(1200);
    await vi.advanceTimersByTimeAsync(100);
    const key = first.calls[0]!.key;

    // The page reloads: a new control over the same tab's storage.
    const second = control(fakeServer([refunded({ "Idempotent-Replayed": "true" })]), storage);
    second.runner.resumeStoredIntent();
    expect(second.phases[0]).toMatchObject({ kind: "sending", resumed: true });
    await vi.runAllTimersAsync();

    expect(second.calls).toEqual([{ key, body: '{"amount":1200}' }]);
    expect(second.runner.getSnapshot().phase).toMatchObject({ kind: "refunded", replayed: true });
    expect(second.onRefunded).toHaveBeenCalledOnce();
  });

  it("only offers an older unconfirmed intent again, and its press resends its key", async () => {
    const storage = new MemoryStorage();
    const first = control(fakeServer(["never"]), storage);
    first.runner.refund(null);
    const key = first.calls[0]!.key;
    await vi.advanceTimersByTimeAsync(AUTO_RESUME_WINDOW_MS + 1);

    const second = control(fakeServer([refunded()]), storage);
    second.runner.resumeStoredIntent();
    expect(second.calls).toHaveLength(0);
    expect(second.runner.getSnapshot()).toMatchObject({
      key,
      unfinishedAmount: null,
      phase: { kind: "unconfirmed" },
    });

    second.runner.refund(null);
    await vi.runAllTimersAsync();
    expect(second.calls[0]!.key).toBe(key);
  });

  it("shows nothing when no intent of the order was left unfinished", () => {
    const { runner, calls } = control(fakeServer([]));
    runner.resumeStoredIntent();
    expect(runner.getSnapshot()).toBe(IDLE_REFUND);
    expect(calls).toHaveLength(0);
  });
});
