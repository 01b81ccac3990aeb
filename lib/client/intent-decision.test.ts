import { describe, expect, it } from "vitest";
import type { Cart, Order } from "./api-types";
import type { CheckoutResult } from "./checkout";
import { endsIntent, intentForPay, markUnresolved } from "./intent-decision";
import type { StoredIntent } from "./intent-store";

const NOW = Date.parse("2025-01-01T12:00:00Z");
const cart: Cart = { cartId: "cart-1", items: [{ sku: "mug-ceramic-350", quantity: 2 }] };

/** Keys as a sequence, so a test can tell which Pay made which key. */
function keyMaker() {
  let made = 0;
  return () => `key-${++made}`;
}

const order = { id: "ord_1" } as Order;
const problem = (status: number) => ({ title: "t", status, detail: "d" });
const RESULTS = {
  paid: { kind: "paid", order, replayed: false, attempts: 1, requestId: null },
  declined: {
    kind: "declined",
    problem: problem(402),
    replayed: false,
    attempts: 1,
    requestId: null,
  },
  refused: {
    kind: "failed",
    outcomeUnknown: false,
    problem: problem(400),
    message: "bad",
    status: 400,
    attempts: 1,
    requestId: null,
  },
  gaveUp: {
    kind: "failed",
    outcomeUnknown: true,
    problem: null,
    message: "no answer",
    status: null,
    attempts: 12,
    requestId: null,
  },
} satisfies Record<string, CheckoutResult>;

/** What the intent runner leaves in sessionStorage for the cart once a run ends. */
function storedAfter(intent: StoredIntent, result: CheckoutResult): StoredIntent | null {
  return endsIntent(result) ? null : markUnresolved(intent);
}

describe("endsIntent", () => {
  it("ends the intent once its outcome is known: paid, declined, or refused", () => {
    expect(endsIntent(RESULTS.paid)).toBe(true);
    expect(endsIntent(RESULTS.declined)).toBe(true);
    expect(endsIntent(RESULTS.refused)).toBe(true);
  });

  it("keeps it when the client gave up with the outcome unknown", () => {
    expect(endsIntent(RESULTS.gaveUp)).toBe(false);
  });
});

describe("intentForPay", () => {
  it("makes a new intent with a new key when the cart has none", () => {
    expect(intentForPay(null, { cart, paymentMethod: "pm_card_visa" }, NOW, keyMaker())).toEqual({
      cartId: "cart-1",
      idempotencyKey: "key-1",
      items: cart.items,
      paymentMethod: "pm_card_visa",
      createdAt: NOW,
      lastRunAt: NOW,
      state: "sending",
      attempts: [],
    });
  });

  it("after the client gave up with the outcome unknown, the next Pay resends the same key", () => {
    const newKey = keyMaker();
    const first = intentForPay(null, { cart, paymentMethod: "pm_card_visa" }, NOW, newKey);
    const kept = storedAfter(first, RESULTS.gaveUp);
    expect(kept?.state).toBe("unresolved");

    const next = intentForPay(kept, { cart, paymentMethod: "pm_card_visa" }, NOW + 60_000, newKey);
    expect(next.idempotencyKey).toBe(first.idempotencyKey);
    expect(next).toBe(kept);
  });

  it.each(["paid", "declined", "refused"] as const)(
    "after a run that %s, the next Pay of the same cart makes a new key",
    (how) => {
      const newKey = keyMaker();
      const first = intentForPay(
        null,
        { cart, paymentMethod: "pm_card_chargeDeclined" },
        NOW,
        newKey,
      );
      const kept = storedAfter(first, RESULTS[how]);
      expect(kept).toBeNull();

      // Even the very same cart and card: a new intent, not a replay of the old result.
      const next = intentForPay(
        kept,
        { cart, paymentMethod: "pm_card_chargeDeclined" },
        NOW + 1000,
        newKey,
      );
      expect(next.idempotencyKey).toBe("key-2");
      expect(next).toMatchObject({ state: "sending", attempts: [], createdAt: NOW + 1000 });
    },
  );

  it("makes a new key when the unfinished intent is a different request (other card, other items, other cart)", () => {
    const unfinished = markUnresolved(
      intentForPay(null, { cart, paymentMethod: "pm_card_visa" }, NOW, () => "old"),
    );
    const otherItems: Cart = { ...cart, items: [{ sku: "mug-ceramic-350", quantity: 3 }] };
    expect(
      intentForPay(unfinished, { cart, paymentMethod: "pm_card_chargeDeclined" }, NOW, () => "new")
        .idempotencyKey,
    ).toBe("new");
    expect(
      intentForPay(
        unfinished,
        { cart: otherItems, paymentMethod: "pm_card_visa" },
        NOW,
        () => "new",
      ).idempotencyKey,
    ).toBe("new");
    expect(
      intentForPay(
        unfinished,
        { cart: { ...cart, cartId: "cart-2" }, paymentMethod: "pm_card_visa" },
        NOW,
        () => "new",
      ).idempotencyKey,
    ).toBe("new");
  });
});
