import { describe, expect, it } from "vitest";
import type { ProviderTally } from "@/lib/ledger/provider-tally";
import {
  chargedTimes,
  damageHeadline,
  groupByPurchase,
  purchaseCharges,
  purchaseVerdict,
  summarisePurchase,
} from "@/lib/ledger/purchase";

const money = (minorUnits: number, currency: string) =>
  `${currency.toUpperCase()} ${(minorUnits / 100).toFixed(2)}`;

function tally(...payments: { id: string; status?: string; amount?: number }[]): ProviderTally {
  const full = payments.map((payment) => ({
    id: payment.id,
    status: payment.status ?? "succeeded",
    amount: payment.amount ?? 650,
    currency: "usd",
    createdAt: new Date(0),
    metadata: {},
  }));
  const succeeded = full.filter((payment) => payment.status === "succeeded");
  return {
    available: true,
    charges: succeeded.length,
    declined: full.length - succeeded.length,
    amountCharged: succeeded.reduce((sum, payment) => sum + payment.amount, 0),
    payments: full,
  };
}

describe("a purchase's charges, from the provider's answers to its lookups", () => {
  it("adds the charges each order's lookup found: two keyless orders, two charges", () => {
    expect(purchaseCharges([tally({ id: "pi_1" }), tally({ id: "pi_2" })], "usd")).toEqual({
      kind: "counted",
      charges: 2,
      amountCharged: 1300,
      currency: "usd",
    });
  });

  it("counts a payment two lookups both found once (a storm's orders share their charges)", () => {
    const storm = tally({ id: "pi_1" }, { id: "pi_2" }, { id: "pi_3" });
    expect(purchaseCharges([storm, storm, storm], "usd")).toMatchObject({
      charges: 3,
      amountCharged: 1950,
    });
  });

  it("leaves declined attempts out: they took no money", () => {
    expect(
      purchaseCharges(
        [tally({ id: "pi_1", status: "requires_payment_method" }, { id: "pi_2" })],
        "usd",
      ),
    ).toMatchObject({ charges: 1, amountCharged: 650 });
  });

  it("counts nothing when one lookup could not be made: half a count would understate the damage", () => {
    expect(
      purchaseCharges(
        [tally({ id: "pi_1" }), { available: false, detail: "provider down" }],
        "usd",
      ),
    ).toEqual({ kind: "unavailable", detail: "provider down" });
  });
});

describe("a purchase's verdict", () => {
  const counted = (charges: number) =>
    ({ kind: "counted", charges, amountCharged: charges * 650, currency: "usd" }) as const;

  it("is right only at exactly one charge", () => {
    expect(purchaseVerdict(counted(1))).toBe("charged-once");
    expect(purchaseVerdict(counted(2))).toBe("charged-more-than-once");
    expect(purchaseVerdict(counted(0))).toBe("not-charged");
  });

  it("is uncounted when the provider was not asked, whatever the reason", () => {
    expect(purchaseVerdict({ kind: "unavailable", detail: "x" })).toBe("uncounted");
    expect(purchaseVerdict({ kind: "limited", retryAfterSeconds: 3 })).toBe("uncounted");
    expect(purchaseVerdict({ kind: "untracked" })).toBe("uncounted");
  });

  it("leads a purchase charged twice with the damage: how often, how much, how many orders", () => {
    const summary = summarisePurchase("cart_1", 2, counted(2));
    expect(summary.verdict).toBe("charged-more-than-once");
    expect(damageHeadline(summary, money)).toBe("Charged twice: USD 13.00, 2 orders");
    expect(damageHeadline(summarisePurchase("cart_1", 3, counted(3)), money)).toBe(
      "Charged 3 times: USD 19.50, 3 orders",
    );
  });

  it("says an order the provider never charged, and has no headline for a purchase that went right or was not counted", () => {
    expect(damageHeadline(summarisePurchase("cart_1", 1, counted(0)), money)).toBe(
      "Not charged at the provider: 1 order",
    );
    expect(damageHeadline(summarisePurchase("cart_1", 1, counted(1)), money)).toBeNull();
    expect(damageHeadline(summarisePurchase("cart_1", 2, { kind: "untracked" }), money)).toBeNull();
  });

  it("words the count of charges", () => {
    expect([0, 1, 2, 3, 12].map(chargedTimes)).toEqual([
      "Not charged",
      "Charged once",
      "Charged twice",
      "Charged 3 times",
      "Charged 12 times",
    ]);
  });
});

describe("grouping orders by purchase", () => {
  it("keeps each purchase where its newest order was, with its orders in their own order", () => {
    const orders = [
      { id: "o5", cartId: "c3" },
      { id: "o4", cartId: "c2" },
      { id: "o3", cartId: "c3" },
      { id: "o2", cartId: "c1" },
      { id: "o1", cartId: "c2" },
    ];
    expect(
      groupByPurchase(orders, (order) => order.cartId).map((group) => [
        group.cartId,
        group.rows.map((order) => order.id),
      ]),
    ).toEqual([
      ["c3", ["o5", "o3"]],
      ["c2", ["o4", "o1"]],
      ["c1", ["o2"]],
    ]);
  });

  it("makes nothing of nothing", () => {
    expect(groupByPurchase([], () => "c")).toEqual([]);
  });
});
