import { describe, expect, it } from "vitest";
import {
  fetchPurchase,
  paidOutcome,
  purchaseUrl,
  summaryOf,
  type Purchase,
  type PurchaseResult,
} from "@/lib/client/purchase";

const purchase: Purchase = {
  object: "purchase",
  cartId: "cart_1",
  orders: [],
  charges: { counted: true, charges: 2, amountCharged: 1300, currency: "usd" },
  verdict: "charged-more-than-once",
};

describe("the shop's read of a purchase", () => {
  it("asks for the cart as one path segment", () => {
    expect(purchaseUrl("cart/1 ?x")).toBe("/api/purchases/cart%2F1%20%3Fx");
  });

  it("words the server's facts as the ledger does", async () => {
    const answer = await fetchPurchase("cart_1", async (url) => {
      expect(url).toBe("/api/purchases/cart_1");
      return Response.json({ ...purchase, orders: [{}, {}] });
    });
    expect(answer.ok && answer.summary).toEqual({
      cartId: "cart_1",
      orders: 2,
      charges: { kind: "counted", charges: 2, amountCharged: 1300, currency: "usd" },
      verdict: "charged-more-than-once",
    });
  });

  it("calls a count the provider could not give uncounted", () => {
    expect(summaryOf({ ...purchase, charges: { counted: false, detail: "down" } }).verdict).toBe(
      "uncounted",
    );
  });

  it("claims nothing when the answer is not a purchase, or never came", async () => {
    expect((await fetchPurchase("c", async () => Response.json({ object: "order" }))).ok).toBe(
      false,
    );
    expect(await fetchPurchase("c", async () => new Response("", { status: 429 }))).toEqual({
      ok: false,
      reason: expect.stringContaining("too often"),
    });
    expect(
      (
        await fetchPurchase("c", async () => {
          throw new TypeError("network");
        })
      ).ok,
    ).toBe(false);
  });
});

describe("what the paid-order box leads with", () => {
  const counted = (charges: number): PurchaseResult => {
    const view: Purchase = {
      ...purchase,
      charges: { counted: true, charges, amountCharged: charges * 650, currency: "usd" },
    };
    return { ok: true, purchase: view, summary: summaryOf(view) };
  };
  const failed: PurchaseResult = { ok: false, reason: "unreachable" };

  it("leads with the damage the records count, with a key or without", () => {
    for (const sentWithKey of [false, true]) {
      expect(paidOutcome(sentWithKey, counted(2))).toBe("damaged");
      expect(paidOutcome(sentWithKey, counted(0))).toBe("damaged");
    }
  });

  it("shows no success for a payment sent without a key until the records say it was charged once", () => {
    expect(paidOutcome(false, null)).toBe("counting");
    expect(paidOutcome(false, failed)).toBe("uncounted");
    const notCounted: Purchase = { ...purchase, charges: { counted: false, detail: "down" } };
    expect(
      paidOutcome(false, { ok: true, purchase: notCounted, summary: summaryOf(notCounted) }),
    ).toBe("uncounted");
    expect(paidOutcome(false, counted(1))).toBe("confirmed");
  });

  it("confirms a payment made under a key at once, the count to follow", () => {
    expect(paidOutcome(true, null)).toBe("confirmed");
    expect(paidOutcome(true, failed)).toBe("confirmed");
    expect(paidOutcome(true, counted(1))).toBe("confirmed");
  });
});
