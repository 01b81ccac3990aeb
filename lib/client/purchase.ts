/**
 * What the server's records say of a purchase (GET /api/purchases/{cartId}):
 * its orders and the provider's charges for them. The shop asks once a
 * payment is answered, so that what it says of the purchase comes from the
 * records, not from what the page believes it sent.
 */
import type { PurchaseView } from "@/lib/ledger/purchase-view";
import {
  summarisePurchase,
  type PurchaseCharges,
  type PurchaseSummary,
} from "@/lib/ledger/purchase";
import type { FetchLike } from "./attempt";

export type Purchase = PurchaseView;

export function purchaseUrl(cartId: string): string {
  return `/api/purchases/${encodeURIComponent(cartId)}`;
}

export type PurchaseResult =
  { ok: true; purchase: Purchase; summary: PurchaseSummary } | { ok: false; reason: string };

export async function fetchPurchase(
  cartId: string,
  fetch: FetchLike = (input, init) => globalThis.fetch(input, init),
): Promise<PurchaseResult> {
  let response: Response;
  try {
    response = await fetch(purchaseUrl(cartId), {
      method: "GET",
      credentials: "same-origin",
      cache: "no-store",
    });
  } catch {
    return { ok: false, reason: "The server could not be reached to count the charges." };
  }
  const json: unknown = await response.json().catch(() => null);
  if (!response.ok || !isPurchase(json))
    return {
      ok: false,
      reason:
        response.status === 429
          ? "The payment provider was asked too often just now; see your orders in a moment."
          : "The charges could not be counted just now; see your orders for them.",
    };
  return { ok: true, purchase: json, summary: summaryOf(json) };
}

/** The view's facts as the summary lib/ledger/purchase.ts words them from. */
export function summaryOf(purchase: Purchase): PurchaseSummary {
  const charges: PurchaseCharges = purchase.charges.counted
    ? {
        kind: "counted",
        charges: purchase.charges.charges,
        amountCharged: purchase.charges.amountCharged,
        currency: purchase.charges.currency,
      }
    : { kind: "unavailable", detail: purchase.charges.detail };
  return summarisePurchase(purchase.cartId, purchase.orders.length, charges);
}

function isPurchase(value: unknown): value is Purchase {
  if (typeof value !== "object" || value === null) return false;
  const v = value as Record<string, unknown>;
  const charges = v.charges as Record<string, unknown> | null | undefined;
  return (
    v.object === "purchase" &&
    typeof v.cartId === "string" &&
    Array.isArray(v.orders) &&
    typeof charges === "object" &&
    charges !== null &&
    (charges.counted === false
      ? typeof charges.detail === "string"
      : charges.counted === true &&
        typeof charges.charges === "number" &&
        typeof charges.amountCharged === "number" &&
        typeof charges.currency === "string")
  );
}

/** What the paid-order box shows: the damage, the success, or why it shows neither yet. */
export type PaidOutcome = "damaged" | "confirmed" | "counting" | "uncounted";

/**
 * The records decide: a purchase they count as charged more than once (or
 * not at all) is damage, whatever was sent. Short of their answer, only a
 * payment made under a key (which the server charges once per key) is
 * confirmed; one sent without a key shows nothing until it is counted.
 */
export function paidOutcome(sentWithKey: boolean, counted: PurchaseResult | null): PaidOutcome {
  const verdict = counted?.ok ? counted.summary.verdict : null;
  if (verdict === "charged-more-than-once" || verdict === "not-charged") return "damaged";
  if (sentWithKey || verdict === "charged-once") return "confirmed";
  return counted === null ? "counting" : "uncounted";
}
