/**
 * One order's refunds from both sides, and what they add up to: our refund
 * rows (what the shop recorded) against the refunds the payment provider
 * holds for the order's PaymentIntent (its own records, lib/ledger/
 * order-refunds.ts reads them). The ledger's proof that a refund happened
 * once, as the charge count is its proof that a payment did.
 *
 * The rule: the provider's succeeded refunds are our succeeded refund rows,
 * one for one (so the same count and the same sum), and neither side's sum
 * exceeds what was charged. Each provider refund is matched by its id to
 * our row; one our row holds only as pending (in flight: the provider
 * answered, our record of it is not committed yet) is matched by the
 * provider key it was asked under, which the provider keeps in its metadata.
 */
import { PROVIDER_KEY_METADATA } from "@/lib/payments/stripe-provider";

/** A refund row of ours, as the ledger shows it. */
export interface RecordedRefund {
  id: string;
  amount: number;
  currency: string;
  status: "pending" | "succeeded" | "refused";
  createdAt: string;
  /** The Idempotency-Key it was made under, for its key's page. */
  idempotencyKey: string;
  providerRefundId: string | null;
  /** The idempotency key the provider was asked under (PROVIDER_KEY_METADATA on its refund). */
  providerKey: string;
  /** The provider's code, for a refund it refused. */
  refusalCode: string | null;
}

/** A refund the provider holds for the PaymentIntent, as the ledger reads it. */
export interface HeldRefund {
  id: string;
  amount: number;
  currency: string;
  status: string;
  createdAt: string;
  metadata: Record<string, string>;
}

/** What the provider answered for the order's refunds, or why it was not asked. */
export type ProviderRefunds =
  | { kind: "read"; refunds: HeldRefund[] }
  | { kind: "unavailable"; detail: string }
  // The account's provider reads ran out: checked again once the window has room.
  | { kind: "limited"; retryAfterSeconds: number };

/**
 * How a provider refund stands against our rows: `recorded`, our succeeded
 * row of the same id and amount; `differs`, that row with another amount;
 * `in-flight`, our pending row of its provider key; `unrecorded`, none of
 * ours (made at the provider behind the shop's back, or lost from our
 * records); `no-money-moved`, it failed or was cancelled there.
 */
export type HeldRefundMatch =
  "recorded" | "differs" | "in-flight" | "unrecorded" | "no-money-moved";

/** What one order's refunds add up to; `disagree` and `over-refunded` must never happen. */
export type RefundVerdict =
  "none" | "agree" | "in-flight" | "disagree" | "over-refunded" | "unchecked";

export interface RefundTotals {
  refunds: number;
  amount: number;
}

export interface OrderRefundCheck {
  /** What the order's payment took, and in which currency. */
  charged: number;
  currency: string;
  /** Our rows, oldest first. */
  recorded: RecordedRefund[];
  /** Our succeeded rows, counted. */
  recordedTotals: RefundTotals;
  /** What our rows hold of the charge, pending or succeeded (payments.refunded_amount). */
  reserved: number;
  provider:
    | {
        kind: "read";
        /** Oldest first, each with how it stands against our rows. */
        refunds: (HeldRefund & { match: HeldRefundMatch })[];
        /** The provider's succeeded refunds, counted. */
        totals: RefundTotals;
        /** Our succeeded rows the provider does not hold (by id, or not for the same amount). */
        missing: RecordedRefund[];
      }
    | Exclude<ProviderRefunds, { kind: "read" }>;
  verdict: RefundVerdict;
}

export function checkRefunds(
  payment: { amount: number; currency: string; refundedAmount: number },
  recorded: readonly RecordedRefund[],
  provider: ProviderRefunds,
): OrderRefundCheck {
  const oldestFirst = [...recorded].sort(byCreation);
  const recordedTotals = totals(oldestFirst.filter((row) => row.status === "succeeded"));
  const base = {
    charged: payment.amount,
    currency: payment.currency,
    recorded: oldestFirst,
    recordedTotals,
    reserved: payment.refundedAmount,
  };
  if (provider.kind !== "read") {
    // Nothing to compare; our own rows can still be over the charge.
    const verdict = recordedTotals.amount > payment.amount ? "over-refunded" : "unchecked";
    return { ...base, provider, verdict };
  }

  const succeededById = new Map(
    oldestFirst
      .filter((row) => row.status === "succeeded")
      .map((row) => [row.providerRefundId, row]),
  );
  const pendingKeys = new Set(
    oldestFirst.filter((row) => row.status === "pending").map((row) => row.providerKey),
  );
  // The provider lists newest first, in the order it made them (its times are whole seconds).
  const held = [...provider.refunds].reverse().map((refund) => ({
    ...refund,
    match: matchOf(refund, succeededById, pendingKeys),
  }));
  const heldSucceeded = held.filter((refund) => refund.status === "succeeded");
  const heldById = new Map(heldSucceeded.map((refund) => [refund.id, refund]));
  const missing = [...succeededById.values()].filter(
    (row) => heldById.get(row.providerRefundId ?? "")?.amount !== row.amount,
  );
  const heldTotals = totals(heldSucceeded);

  let verdict: RefundVerdict;
  if (heldTotals.amount > payment.amount || recordedTotals.amount > payment.amount)
    verdict = "over-refunded";
  else if (
    missing.length > 0 ||
    held.some((refund) => refund.match === "unrecorded" || refund.match === "differs")
  )
    verdict = "disagree";
  else if (pendingKeys.size > 0) verdict = "in-flight";
  else verdict = recordedTotals.refunds > 0 ? "agree" : "none";

  return {
    ...base,
    provider: { kind: "read", refunds: held, totals: heldTotals, missing },
    verdict,
  };
}

function matchOf(
  refund: HeldRefund,
  succeededById: ReadonlyMap<string | null, RecordedRefund>,
  pendingKeys: ReadonlySet<string>,
): HeldRefundMatch {
  // A refund that failed or was cancelled at the provider moved no money: nothing to match.
  if (refund.status !== "succeeded" && refund.status !== "pending") return "no-money-moved";
  const ours = succeededById.get(refund.id);
  if (ours) return ours.amount === refund.amount ? "recorded" : "differs";
  const key = refund.metadata[PROVIDER_KEY_METADATA];
  return key !== undefined && pendingKeys.has(key) ? "in-flight" : "unrecorded";
}

function totals(refunds: readonly { amount: number }[]): RefundTotals {
  return {
    refunds: refunds.length,
    amount: refunds.reduce((sum, refund) => sum + refund.amount, 0),
  };
}

function byCreation(a: RecordedRefund, b: RecordedRefund): number {
  return a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id);
}

/** Whether a verdict is one that must never happen: said as loudly as a purchase charged twice. */
export function isRefundDamage(verdict: RefundVerdict): boolean {
  return verdict === "disagree" || verdict === "over-refunded";
}
