import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import {
  IDEMPOTENCY_KEY_HEADER,
  IDEMPOTENT_REPLAYED_HEADER,
  KEY_POLICY_HEADER,
  RETRY_AFTER_HEADER,
} from "@/lib/http/headers";
import type { Cart } from "./api-types";
import type { FetchLike } from "./attempt";
import { ORDERS_URL, submitCheckout } from "./checkout";
import type { CheckoutPhase } from "./checkout-phase";
import { DEFAULT_STRATEGY, demoScenario } from "./demo";
import { createAuthenticationStore } from "./authentication";
import { AUTO_RESUME_WINDOW_MS, createIntentStore } from "./intent-store";
import { IDLE_SNAPSHOT, createIntentRunner, type PayRequest } from "./intent-runner";
import { MemoryStorage, jsonAnswer, sampleOrder } from "@/lib/testing/browser";

const cart: Cart = { cartId: "cart_1", items: [{ sku: "mug-ceramic-350", quantity: 2 }] };
const normal: PayRequest = { cart, paymentMethod: "pm_card_visa", strategy: DEFAULT_STRATEGY };
const doubleClick: PayRequest = { ...normal, strategy: demoScenario("double-click").strategy };

const order = sampleOrder(cart.cartId);
const json = jsonAnswer;

const created = () => json(201, order);
const replayed = () => json(201, order, { [IDEMPOTENT_REPLAYED_HEADER]: "true" });
const inProgress = () =>
  json(
    409,
    { title: "Conflict", status: 409, detail: "still running" },
    { [RETRY_AFTER_HEADER]: "1" },
  );
const unavailable = () =>
  json(
    503,
    { title: "Service Unavailable", status: 503, detail: "try later" },
    { [RETRY_AFTER_HEADER]: "1" },
  );
const declined = () =>
  json(402, {
    title: "Payment declined",
    status: 402,
    detail: "Your card was declined.",
    declineCode: "generic_decline",
  });

/**
 * A step the fake server takes: answer, fail the connection, answer later,
 * or never settle at all (the page that sent it is gone, so nothing may come
 * back to it). A function is called when the request arrives.
 */
type Step = Response | Error | { after: number; then: Response | Error } | "never" | (() => Step);

/** A fake fetch that plays `steps` in order (then `otherwise`), recording each request's key and time. */
function fakeServer(steps: Step[], otherwise?: () => Step) {
  const calls: { at: number; url: string; key: string | null }[] = [];
  const fetch: FetchLike = (url, init) => {
    calls.push({ at: Date.now(), url, key: new Headers(init.headers).get(IDEMPOTENCY_KEY_HEADER) });
    let step = steps[calls.length - 1] ?? otherwise?.();
    while (typeof step === "function") step = step();
    if (step === undefined) return Promise.reject(new Error(`unexpected request #${calls.length}`));
    if (step === "never") return new Promise<Response>(() => {});
    if (step instanceof Error) return Promise.reject(step);
    if (step instanceof Response) return Promise.resolve(step);
    const { after, then } = step;
    return new Promise<Response>((resolve, reject) => {
      init.signal?.addEventListener("abort", () => reject(init.signal?.reason), { once: true });
      setTimeout(() => (then instanceof Error ? reject(then) : resolve(then)), after);
    });
  };
  return { fetch, calls };
}

/** A page: a runner over `storage` (shared across "reloads") sending to a fake server, with every phase and event recorded. */
function page(server: ReturnType<typeof fakeServer>, storage: Storage = new MemoryStorage()) {
  const store = createIntentStore(storage);
  const runner = createIntentRunner({
    store,
    submit: (options) => submitCheckout({ ...options, fetch: server.fetch, random: () => 0.5 }),
  });
  const phases: CheckoutPhase[] = [];
  runner.subscribe(() => phases.push(runner.getSnapshot().phase));
  const settled = vi.fn();
  const restored = vi.fn();
  runner.observe({ onSettled: settled, onRestore: restored });
  return { runner, store, storage, phases, settled, restored, calls: server.calls };
}

beforeEach(() => {
  vi.useFakeTimers({ now: Date.parse("2025-01-01T00:00:00Z") });
});

afterEach(() => {
  vi.useRealTimers();
});

describe("intent runner: one intent, one key", () => {
  it("saves the intent with its key before the first attempt is sent", async () => {
    const storage = new MemoryStorage();
    const store = createIntentStore(storage);
    let storedWhenSent: { key: string; state: string } | null = null;
    const { runner, calls } = page(
      fakeServer([
        () => {
          const stored = store.load(cart.cartId);
          storedWhenSent = stored && { key: stored.idempotencyKey, state: stored.state };
          return created();
        },
      ]),
      storage,
    );

    runner.pay(normal);
    await vi.runAllTimersAsync();

    expect(storedWhenSent).toEqual({ key: calls[0]?.key, state: "sending" });
    expect(calls[0]?.key).toMatch(/^[0-9a-f-]{36}$/);
    expect(runner.getSnapshot()).toMatchObject({
      phase: { kind: "paid", replayed: false },
      key: calls[0]?.key,
      keyless: false,
    });
    expect(runner.getSnapshot().paid).toEqual({
      order,
      replayed: false,
      key: calls[0]?.key,
      attempts: 1,
    });
    // Paid ends the intent: nothing is left to resume.
    expect(store.load(cart.cartId)).toBeNull();
  });

  it("shows each retry with the wait before it, and sends the same key every time", async () => {
    const { runner, phases, calls } = page(fakeServer([unavailable(), created()]));

    runner.pay(normal);
    await vi.runAllTimersAsync();

    expect(calls.map((call) => call.key)).toEqual([calls[0]?.key, calls[0]?.key]);
    expect(phases.map((phase) => phase.kind)).toContain("waiting");
    expect(
      phases.filter((phase) => phase.kind === "paying").map((phase) => phase.attempt),
    ).toContain(2);
    expect(
      runner.getSnapshot().log.map((entry) => [entry.run, entry.runAttempt, entry.status]),
    ).toEqual([
      [1, 1, 503],
      [1, 2, 201],
    ]);
  });

  it("the Pay button's guard ignores a second Pay while a run is in flight", async () => {
    const { runner, calls } = page(fakeServer([{ after: 1000, then: created() }]));

    runner.pay(normal);
    runner.pay(normal);
    await vi.runAllTimersAsync();

    expect(calls).toHaveLength(1);
  });

  it("a second overlapping run of the same intent reuses its key", async () => {
    const { runner, calls } = page(
      fakeServer([{ after: 1000, then: created() }, inProgress(), replayed()]),
    );

    runner.pay(doubleClick);
    runner.pay(doubleClick);
    await vi.runAllTimersAsync();

    expect(calls).toHaveLength(3);
    expect(new Set(calls.map((call) => call.key)).size).toBe(1);
    // One intent with two runs: the first run's answer lands in the same log.
    expect(
      runner
        .getSnapshot()
        .log.map((entry) => [entry.seq, entry.run, entry.runAttempt, entry.status]),
    ).toEqual([
      [1, 1, 1, 201],
      [2, 2, 1, 409],
      [3, 2, 2, 201],
    ]);
    expect(runner.getSnapshot().phase.kind).toBe("paid");
  });

  it("late answers of an overlapping run do not bring an ended intent back", async () => {
    const { runner, store, phases } = page(
      fakeServer([{ after: 100, then: created() }, { after: 500, then: inProgress() }, replayed()]),
    );

    runner.pay(doubleClick);
    runner.pay(doubleClick);
    await vi.advanceTimersByTimeAsync(100);
    expect(runner.getSnapshot().phase).toEqual({ kind: "paid", replayed: false });
    const paidAt = phases.length;

    await vi.runAllTimersAsync();

    // The second run's 409, its wait and its retry are logged, but the page still says paid, from the first answer.
    expect(runner.getSnapshot().log).toHaveLength(3);
    expect(phases.slice(paidAt).every((phase) => phase.kind === "paid" && !phase.replayed)).toBe(
      true,
    );
    expect(runner.getSnapshot().paid?.replayed).toBe(false);
    expect(store.load(cart.cartId)).toBeNull();
  });

  it("onSettled fires once when every run has finished", async () => {
    const { runner, settled } = page(
      fakeServer([
        { after: 100, then: created() },
        { after: 2000, then: replayed() },
      ]),
    );

    runner.pay(doubleClick);
    runner.pay(doubleClick);
    await vi.advanceTimersByTimeAsync(1000);
    expect(runner.getSnapshot().phase.kind).toBe("paid");
    expect(settled).not.toHaveBeenCalled();

    await vi.runAllTimersAsync();
    expect(settled).toHaveBeenCalledTimes(1);
  });
});

describe("intent runner: when the intent ends", () => {
  it("giving up with the outcome unknown keeps the intent, so the next Pay resends its key", async () => {
    const { runner, store, calls, settled } = page(fakeServer([], unavailable));

    runner.pay(normal);
    await vi.runAllTimersAsync();

    const key = calls[0]?.key;
    expect(runner.getSnapshot().phase).toMatchObject({ kind: "failed", outcomeUnknown: true });
    expect(store.load(cart.cartId)).toMatchObject({ idempotencyKey: key, state: "unresolved" });
    expect(settled).toHaveBeenCalledTimes(1);

    const firstRun = calls.length;
    runner.pay(normal);
    await vi.advanceTimersByTimeAsync(0);

    expect(calls[firstRun]?.key).toBe(key);
    expect(runner.getSnapshot().log.at(-1)).toMatchObject({ run: 2, runAttempt: 1 });
  });

  it("keeps with the intent how long the server keeps its key, so a short-lived key's intent is forgotten in time", async () => {
    const shortLived = () =>
      json(
        503,
        { title: "Service Unavailable", status: 503, detail: "try later" },
        { [RETRY_AFTER_HEADER]: "1", [KEY_POLICY_HEADER]: "retention=600, lease=30" },
      );
    const { runner, store } = page(fakeServer([], shortLived));
    runner.pay(normal);
    await vi.runAllTimersAsync();
    expect(store.load(cart.cartId)).toMatchObject({
      state: "unresolved",
      keyRetentionSeconds: 600,
    });
    vi.advanceTimersByTime(300_001);
    expect(store.load(cart.cartId)).toBeNull();
  });

  it("a run whose submit throws counts as outcome unknown: the intent is kept", async () => {
    const storage = new MemoryStorage();
    const store = createIntentStore(storage);
    const runner = createIntentRunner({ store, submit: () => Promise.reject(new Error("boom")) });

    runner.pay(normal);
    await vi.runAllTimersAsync();

    expect(runner.getSnapshot().phase).toEqual({
      kind: "failed",
      detail: "boom",
      outcomeUnknown: true,
    });
    expect(store.load(cart.cartId)?.state).toBe("unresolved");
  });

  it("a decline ends the intent: the next Pay makes a new key", async () => {
    const { runner, store, calls } = page(fakeServer([declined(), created()]));

    runner.pay(normal);
    await vi.runAllTimersAsync();
    expect(runner.getSnapshot().phase).toEqual({
      kind: "declined",
      detail: "Your card was declined.",
    });
    expect(store.load(cart.cartId)).toBeNull();

    // The very same cart and card: only the decline decides that this is a new intent.
    runner.pay(normal);
    await vi.runAllTimersAsync();

    expect(calls).toHaveLength(2);
    expect(calls[1]?.key).not.toBe(calls[0]?.key);
    expect(runner.getSnapshot().log.map((entry) => [entry.run, entry.status])).toEqual([[1, 201]]);
  });

  it("reset shows the idle page, and a run still in flight cannot bring its intent back", async () => {
    const { runner } = page(
      fakeServer([
        { after: 100, then: created() },
        { after: 1000, then: replayed() },
      ]),
    );

    runner.pay(doubleClick);
    runner.pay(doubleClick);
    await vi.advanceTimersByTimeAsync(100);
    runner.reset();
    await vi.runAllTimersAsync();

    expect(runner.getSnapshot()).toEqual(IDLE_SNAPSHOT);
  });

  it("the broken strategy sends no key and leaves nothing to resume", async () => {
    const { runner, storage, calls } = page(fakeServer([created()]));

    runner.pay({ ...normal, strategy: demoScenario("no-key").strategy });
    await vi.runAllTimersAsync();

    expect(calls).toEqual([
      expect.objectContaining({ url: demoScenario("no-key").strategy.url, key: null }),
    ]);
    expect(runner.getSnapshot()).toMatchObject({
      key: null,
      keyless: true,
      paid: { key: null },
      phase: { kind: "paid" },
    });
    expect(storage.length).toBe(0);
  });
});

describe("intent runner: reloads", () => {
  /** A first page pays and is reloaded while its attempt is on the wire: its answer never arrives. */
  function reloadedMidPayment() {
    const storage = new MemoryStorage();
    const first = page(fakeServer(["never"]), storage);
    first.runner.pay(normal);
    first.runner.pageUnloading();
    return { storage, key: first.calls[0]?.key };
  }

  it("a reload that finds a run cut short moments ago resumes it with the same key", async () => {
    const { storage, key } = reloadedMidPayment();
    await vi.advanceTimersByTimeAsync(2000);

    const second = page(fakeServer([inProgress(), replayed()]), storage);
    second.runner.resumeStoredIntent();
    expect(second.restored).toHaveBeenCalledWith(
      expect.objectContaining({ cartId: cart.cartId, idempotencyKey: key, items: cart.items }),
    );
    expect(second.runner.getSnapshot().phase).toMatchObject({ kind: "paying", resumed: true });
    await vi.runAllTimersAsync();

    expect(second.calls.map((call) => [call.url, call.key])).toEqual([
      [ORDERS_URL, key],
      [ORDERS_URL, key],
    ]);
    // The first page's attempt never got an answer; the resumed run is the intent's second.
    expect(second.runner.getSnapshot().log.map((entry) => [entry.run, entry.state])).toEqual([
      [1, "interrupted"],
      [2, "done"],
      [2, "done"],
    ]);
    expect(second.runner.getSnapshot().phase).toEqual({ kind: "paid", replayed: true });
    expect(second.store.load(cart.cartId)).toBeNull();
  });

  it("an older cut-short run waits for Pay", async () => {
    const { storage, key } = reloadedMidPayment();
    vi.setSystemTime(Date.now() + AUTO_RESUME_WINDOW_MS + 1000);

    const second = page(fakeServer([replayed()]), storage);
    second.runner.resumeStoredIntent();
    await vi.runAllTimersAsync();

    expect(second.calls).toHaveLength(0);
    expect(second.restored).toHaveBeenCalledTimes(1);
    expect(second.runner.getSnapshot()).toMatchObject({
      key,
      phase: {
        kind: "failed",
        detail: "An earlier payment for this cart was not confirmed.",
        outcomeUnknown: true,
      },
    });

    second.runner.pay(normal);
    await vi.runAllTimersAsync();
    expect(second.calls.map((call) => call.key)).toEqual([key]);
  });

  it("a page that finds nothing stored stays idle", async () => {
    const { runner, restored, calls } = page(fakeServer([]));
    runner.resumeStoredIntent();
    await vi.runAllTimersAsync();

    expect(restored).not.toHaveBeenCalled();
    expect(calls).toHaveLength(0);
    expect(runner.getSnapshot()).toEqual(IDLE_SNAPSHOT);
  });

  it("an attempt cut off by unloading is logged as interrupted", async () => {
    const { runner } = page(
      fakeServer([{ after: 100, then: new TypeError("Failed to fetch") }, "never"]),
    );

    runner.pay(normal);
    runner.pageUnloading();
    await vi.advanceTimersByTimeAsync(100);

    expect(runner.getSnapshot().log[0]).toMatchObject({
      state: "interrupted",
      failure: null,
      durationMs: null,
    });
  });

  it("a network failure while the page stays is an error, retried, not an interruption", async () => {
    const { runner } = page(
      fakeServer([{ after: 100, then: new TypeError("Failed to fetch") }, "never"]),
    );

    runner.pay(normal);
    await vi.advanceTimersByTimeAsync(100);

    expect(runner.getSnapshot().log[0]).toMatchObject({ state: "done", failure: "network" });
    expect(runner.getSnapshot().phase).toMatchObject({ kind: "waiting", nextAttempt: 2 });
  });
});

describe("intent runner: 3-D Secure", () => {
  const pending = {
    ...order,
    status: "pending" as const,
    payment: { ...order.payment!, status: "pending" as const },
    nextAction: {
      type: "redirect" as const,
      url: "http://bank.test/authenticate/pi_1?client_secret=s",
    },
  };

  /** A page whose tab leaves for the bank, then comes back with the same sessionStorage. */
  function bankPages(orderAfterBank: typeof order) {
    const storage = new MemoryStorage();
    const navigated: string[] = [];
    const looked: string[] = [];
    const runnerOn = (fetch: FetchLike) =>
      createIntentRunner({
        store: createIntentStore(storage),
        authentications: createAuthenticationStore(storage),
        submit: (options) => submitCheckout({ ...options, fetch, random: () => 0.5 }),
        navigate: (url) => navigated.push(url),
        awaitOrder: async ({ orderId, onLook }) => {
          looked.push(orderId);
          onLook?.(1);
          return orderAfterBank;
        },
      });
    return { storage, navigated, looked, runnerOn };
  }

  it("sends the shopper to the bank with the key's 202, then shows the order as the provider settled it", async () => {
    const pages = bankPages(order);
    const before = pages.runnerOn(fakeServer([() => json(202, pending)]).fetch);

    before.pay(normal);
    await vi.runAllTimersAsync();

    expect(before.getSnapshot().phase).toEqual({ kind: "authenticating" });
    expect(pages.navigated).toEqual([pending.nextAction.url]);
    // The key answered for good: nothing of the intent is left to resend.
    expect(createIntentStore(pages.storage).load(cart.cartId)).toBeNull();

    const after = pages.runnerOn(fakeServer([]).fetch);
    const phases: CheckoutPhase[] = [];
    after.subscribe(() => phases.push(after.getSnapshot().phase));
    after.resumeStoredIntent();
    await vi.runAllTimersAsync();

    expect(pages.looked).toEqual([order.id]);
    expect(phases.map((phase) => phase.kind)).toContain("confirming");
    expect(after.getSnapshot()).toMatchObject({
      phase: { kind: "paid", replayed: false },
      paid: { order, replayed: false },
    });
    expect(after.getSnapshot().log).toHaveLength(1);
    expect(after.getSnapshot().log[0]).toMatchObject({ status: 202 });

    // Shown once: a reload after it is a plain page.
    const reloaded = pages.runnerOn(fakeServer([]).fetch);
    reloaded.resumeStoredIntent();
    await vi.runAllTimersAsync();
    expect(reloaded.getSnapshot().phase).toEqual({ kind: "idle" });
  });

  it("is not settled while the shopper is at the bank: onSettled comes once the order has settled, on the way back", async () => {
    const pages = bankPages(order);
    const before = pages.runnerOn(fakeServer([() => json(202, pending)]).fetch);
    const settledBefore = vi.fn();
    before.observe({ onSettled: settledBefore });
    before.pay(normal);
    await vi.runAllTimersAsync();

    // The demo panel keeps its scenario armed across the round trip.
    expect(settledBefore).not.toHaveBeenCalled();

    const after = pages.runnerOn(fakeServer([]).fetch);
    const settledAfter = vi.fn();
    after.observe({ onSettled: settledAfter });
    after.resumeStoredIntent();
    await vi.runAllTimersAsync();
    expect(settledAfter).toHaveBeenCalledTimes(1);
  });

  it("says the bank did not confirm when the order failed", async () => {
    const pages = bankPages({ ...order, status: "failed" });
    pages.runnerOn(fakeServer([() => json(202, pending)]).fetch).pay(normal);
    await vi.runAllTimersAsync();

    const after = pages.runnerOn(fakeServer([]).fetch);
    const restored = vi.fn();
    after.observe({ onRestore: restored });
    after.resumeStoredIntent();
    await vi.runAllTimersAsync();

    expect(after.getSnapshot().phase).toMatchObject({
      kind: "declined",
      detail: expect.stringContaining("your bank did not confirm it"),
    });
    // The cart is back on screen, to pay again with another card.
    expect(restored).toHaveBeenCalledWith({
      cartId: order.cartId,
      items: [{ sku: "mug-ceramic-350", quantity: 2 }],
      paymentMethod: "pm_card_visa",
    });
  });
});
