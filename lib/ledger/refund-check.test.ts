import { describe, expect, it } from "vitest";
import { PROVIDER_KEY_METADATA } from "@/lib/payments/stripe-provider";
import {
  checkRefunds,
  isRefundDamage,
  type HeldRefund,
  type RecordedRefund,
} from "@/lib/ledger/refund-check";

const payment = { amount: 5050, currency: "usd", refundedAmount: 0 };
const at = (second: number) => new Date(Date.UTC(2026, 11, 6, 12, 0, second)).toISOString();

function ours(n: number, amount: number, overrides: Partial<RecordedRefund> = {}): RecordedRefund {
  return {
    id: `row-${n}`,
    amount,
    currency: "usd",
    status: "succeeded",
    createdAt: at(n),
    idempotencyKey: `key-${n}`,
    providerRefundId: `re_${n}`,
    providerKey: `oncepay:acct:refund:${n}`,
    refusalCode: null,
    ...overrides,
  };
}

function theirs(n: number, amount: number, overrides: Partial<HeldRefund> = {}): HeldRefund {
  return {
    id: `re_${n}`,
    amount,
    currency: "usd",
    status: "succeeded",
    createdAt: at(n),
    metadata: { [PROVIDER_KEY_METADATA]: `oncepay:acct:refund:${n}` },
    ...overrides,
  };
}

/** The provider lists newest first. */
const read = (...refunds: HeldRefund[]) => ({ kind: "read", refunds: refunds.reverse() }) as const;

describe("an order's refunds, ours against the provider's", () => {
  it("has nothing to say of an order refunded on neither side", () => {
    expect(checkRefunds(payment, [], read()).verdict).toBe("none");
  });

  it("agrees when the provider holds our succeeded refunds one for one: the same count and sum", () => {
    const check = checkRefunds(
      { ...payment, refundedAmount: 1700 },
      [ours(1, 1000), ours(2, 700)],
      read(theirs(1, 1000), theirs(2, 700)),
    );
    expect(check.verdict).toBe("agree");
    expect(check.recordedTotals).toEqual({ refunds: 2, amount: 1700 });
    expect(check.provider).toMatchObject({
      kind: "read",
      totals: { refunds: 2, amount: 1700 },
      missing: [],
    });
    // Oldest first on both sides.
    if (check.provider.kind !== "read") throw new Error("read");
    expect(check.provider.refunds.map((refund) => [refund.id, refund.match])).toEqual([
      ["re_1", "recorded"],
      ["re_2", "recorded"],
    ]);
    expect(check.recorded.map((row) => row.id)).toEqual(["row-1", "row-2"]);
  });

  it("disagrees when the provider holds a refund we have no row of (made behind the shop's back)", () => {
    const check = checkRefunds(payment, [ours(1, 1000)], read(theirs(1, 1000), theirs(2, 500)));
    expect(check.verdict).toBe("disagree");
    expect(isRefundDamage(check.verdict)).toBe(true);
    expect(check.provider).toMatchObject({ totals: { refunds: 2, amount: 1500 } });
    if (check.provider.kind !== "read") throw new Error("read");
    expect(check.provider.refunds.map((refund) => refund.match)).toEqual([
      "recorded",
      "unrecorded",
    ]);
  });

  it("disagrees when a refund we recorded as made is not at the provider", () => {
    const check = checkRefunds(payment, [ours(1, 1000), ours(2, 300)], read(theirs(1, 1000)));
    expect(check.verdict).toBe("disagree");
    expect(check.provider).toMatchObject({ missing: [{ id: "row-2" }] });
  });

  it("disagrees when the provider's refund of the same id is for another amount", () => {
    const check = checkRefunds(payment, [ours(1, 1000)], read(theirs(1, 900)));
    expect(check.verdict).toBe("disagree");
    if (check.provider.kind !== "read") throw new Error("read");
    expect(check.provider.refunds[0]!.match).toBe("differs");
    expect(check.provider.missing.map((row) => row.id)).toEqual(["row-1"]);
  });

  it("is in flight, not wrong, while our row is pending: the provider may or may not hold it yet", () => {
    const pending = ours(1, 1000, { status: "pending", providerRefundId: null });
    expect(checkRefunds(payment, [pending], read()).verdict).toBe("in-flight");
    const answered = checkRefunds(payment, [pending], read(theirs(1, 1000)));
    expect(answered.verdict).toBe("in-flight");
    if (answered.provider.kind !== "read") throw new Error("read");
    expect(answered.provider.refunds[0]!.match).toBe("in-flight");
  });

  it("says loudly when the provider refunded more than was charged", () => {
    const check = checkRefunds(payment, [ours(1, 5050)], read(theirs(1, 5050), theirs(2, 100)));
    expect(check.verdict).toBe("over-refunded");
    expect(isRefundDamage(check.verdict)).toBe(true);
  });

  it("counts neither a refund the provider failed nor one it refused: no money moved", () => {
    const check = checkRefunds(
      payment,
      [ours(1, 1000), ours(2, 400, { status: "refused", providerRefundId: null })],
      read(theirs(1, 1000), theirs(3, 200, { status: "failed" })),
    );
    expect(check.verdict).toBe("agree");
    expect(check.recordedTotals).toEqual({ refunds: 1, amount: 1000 });
    expect(check.provider).toMatchObject({ totals: { refunds: 1, amount: 1000 } });
  });

  it("is unchecked when the provider could not be asked, and says why", () => {
    const down = checkRefunds(payment, [ours(1, 1000)], { kind: "unavailable", detail: "down" });
    expect(down).toMatchObject({
      verdict: "unchecked",
      provider: { kind: "unavailable", detail: "down" },
      recordedTotals: { refunds: 1, amount: 1000 },
    });
    expect(isRefundDamage(down.verdict)).toBe(false);
    const limited = checkRefunds(payment, [], { kind: "limited", retryAfterSeconds: 7 });
    expect(limited).toMatchObject({
      verdict: "unchecked",
      provider: { kind: "limited", retryAfterSeconds: 7 },
    });
  });
});
