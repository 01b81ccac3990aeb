import { describe, expect, it } from "vitest";
import { MemoryStorage } from "@/lib/testing/browser";
import { INTENT_MAX_AGE_MS } from "./intent-store";
import { createRefundIntentStore, intentForRefund, type RefundIntent } from "./refund-intent";

const NOW = Date.parse("2026-12-06T12:00:00Z");
const keys = () => {
  let n = 0;
  return () => `new-${++n}`;
};

function intent(overrides: Partial<RefundIntent> = {}): RefundIntent {
  return {
    orderId: "order-1",
    idempotencyKey: "key-1",
    amount: 700,
    createdAt: NOW,
    lastRunAt: NOW,
    state: "unresolved",
    ...overrides,
  };
}

describe("which key a press of Refund sends", () => {
  it("makes a new key for a first press", () => {
    expect(intentForRefund(null, { orderId: "order-1", amount: null }, NOW, keys())).toEqual({
      orderId: "order-1",
      idempotencyKey: "new-1",
      amount: null,
      createdAt: NOW,
      lastRunAt: NOW,
      state: "sending",
    });
  });

  it("resends the unfinished intent's key for the same order and amount", () => {
    const again = intentForRefund(intent(), { orderId: "order-1", amount: 700 }, NOW + 5, keys());
    expect(again).toMatchObject({ idempotencyKey: "key-1", state: "sending", lastRunAt: NOW + 5 });
    const rest = intent({ amount: null });
    expect(
      intentForRefund(rest, { orderId: "order-1", amount: null }, NOW, keys()).idempotencyKey,
    ).toBe("key-1");
  });

  it("makes a new key for another amount or another order: another request", () => {
    const newKey = keys();
    expect(
      intentForRefund(intent(), { orderId: "order-1", amount: 800 }, NOW, newKey),
    ).toMatchObject({ idempotencyKey: "new-1", amount: 800 });
    expect(
      intentForRefund(intent(), { orderId: "order-2", amount: 700 }, NOW, newKey).idempotencyKey,
    ).toBe("new-2");
    expect(
      intentForRefund(intent(), { orderId: "order-1", amount: null }, NOW, newKey).idempotencyKey,
    ).toBe("new-3");
  });
});

describe("the refund intent store", () => {
  it("keeps one intent per order, and reads it back whole", () => {
    const store = createRefundIntentStore(new MemoryStorage(), () => NOW);
    store.save(intent());
    store.save(intent({ orderId: "order-2", idempotencyKey: "key-2", amount: null }));
    expect(store.load("order-1")).toEqual(intent());
    expect(store.load("order-2")).toMatchObject({ idempotencyKey: "key-2", amount: null });
    store.remove("order-1");
    expect(store.load("order-1")).toBeNull();
  });

  it("forgets an intent older than half the server's key lifetime", () => {
    const storage = new MemoryStorage();
    let now = NOW;
    const store = createRefundIntentStore(storage, () => now);
    store.save(intent());
    now = NOW + INTENT_MAX_AGE_MS + 1;
    expect(store.load("order-1")).toBeNull();
    expect(storage.length).toBe(0);
  });

  it("drops an entry it cannot read, and survives storage that refuses writes", () => {
    const storage = new MemoryStorage();
    storage.setItem("oncepay.refund.order-1", '{"orderId":"order-1","amount":-3}');
    const store = createRefundIntentStore(storage, () => NOW);
    expect(store.load("order-1")).toBeNull();
    storage.failWrites = true;
    expect(() => store.save(intent())).not.toThrow();
    expect(store.load("order-1")).toBeNull();
    expect(createRefundIntentStore(null).load("order-1")).toBeNull();
  });
});
