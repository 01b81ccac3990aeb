import type { ProviderTally } from "@/lib/ledger/provider-tally";

/**
 * A purchase: one cart paid for. The shop mints a cart id at a cart's first
 * Pay and keeps it, through declines and retries, until the cart is paid
 * (lib/client/cart-id.ts); every attempt sends it and every order records
 * it. So the orders of one purchase are the account's orders with one cart
 * id, and a purchase charged more than once is money taken twice for one
 * thing bought, whatever each of its orders says on its own.
 *
 * Everything here is counted from recorded facts: the purchase's orders
 * (our table) and the charges the payment provider holds for them (its own
 * records), never from what a page believes it sent.
 */

/** What the provider holds for a purchase, or why it was not counted. */
export type PurchaseCharges =
  | { kind: "counted"; charges: number; amountCharged: number; currency: string }
  | { kind: "unavailable"; detail: string }
  // The account's provider reads ran out: counted again once the window has room.
  | { kind: "limited"; retryAfterSeconds: number }
  // Paid before payments kept their provider key: nothing to look it up by.
  | { kind: "untracked" };

/** What a purchase's facts add up to; only `charged-once` is right. */
export type PurchaseVerdict =
  "charged-once" | "charged-more-than-once" | "not-charged" | "uncounted";

export interface PurchaseSummary {
  cartId: string;
  /** Orders written for this one purchase: 1 when it went right. */
  orders: number;
  charges: PurchaseCharges;
  verdict: PurchaseVerdict;
}

/**
 * The charges of one purchase, from the provider's answers to each lookup
 * its orders need (a key, a storm, an order's own provider key). Lookups
 * can find the same payment (a storm's, say); it counts once. One lookup
 * that could not be made leaves the whole purchase uncounted: a partial
 * count would understate the damage.
 */
export function purchaseCharges(
  tallies: readonly ProviderTally[],
  currency: string,
): PurchaseCharges {
  const succeeded = new Map<string, number>();
  for (const tally of tallies) {
    if (!tally.available) return { kind: "unavailable", detail: tally.detail };
    for (const payment of tally.payments)
      if (payment.status === "succeeded") succeeded.set(payment.id, payment.amount);
  }
  return {
    kind: "counted",
    charges: succeeded.size,
    amountCharged: [...succeeded.values()].reduce((sum, amount) => sum + amount, 0),
    currency,
  };
}

export function purchaseVerdict(charges: PurchaseCharges): PurchaseVerdict {
  if (charges.kind !== "counted") return "uncounted";
  if (charges.charges === 0) return "not-charged";
  return charges.charges === 1 ? "charged-once" : "charged-more-than-once";
}

export function summarisePurchase(
  cartId: string,
  orders: number,
  charges: PurchaseCharges,
): PurchaseSummary {
  return { cartId, orders, charges, verdict: purchaseVerdict(charges) };
}

/** "Charged once", "Charged twice", "Charged 3 times". */
export function chargedTimes(charges: number): string {
  if (charges === 0) return "Not charged";
  if (charges === 1) return "Charged once";
  if (charges === 2) return "Charged twice";
  return `Charged ${charges} times`;
}

/**
 * The damage first, in one line: "Charged twice: $13.00, 2 orders". Null for
 * a purchase that went right or was not counted (there is nothing to lead
 * with). Money is formatted by the caller, as the pages format all money.
 */
export function damageHeadline(
  summary: PurchaseSummary,
  formatMoney: (minorUnits: number, currency: string) => string,
): string | null {
  const { charges } = summary;
  if (charges.kind !== "counted" || summary.verdict === "charged-once") return null;
  const orders = `${summary.orders} ${summary.orders === 1 ? "order" : "orders"}`;
  if (summary.verdict === "not-charged") return `Not charged at the provider: ${orders}`;
  return `${chargedTimes(charges.charges)}: ${formatMoney(charges.amountCharged, charges.currency)}, ${orders}`;
}

/**
 * Rows (newest first) grouped by purchase: each group sits where its newest
 * row was, its rows in their own order.
 */
export function groupByPurchase<Row>(
  rows: readonly Row[],
  cartIdOf: (row: Row) => string,
): { cartId: string; rows: Row[] }[] {
  const groups = new Map<string, Row[]>();
  for (const row of rows) {
    const cartId = cartIdOf(row);
    const group = groups.get(cartId);
    if (group) group.push(row);
    else groups.set(cartId, [row]);
  }
  return [...groups].map(([cartId, grouped]) => ({ cartId, rows: grouped }));
}
