import type { Database } from "@/lib/db/client";
import type { ListParams } from "@/lib/http/list-params";
import { LAB_STORM_METADATA } from "@/lib/lab/charge-tags";
import type { LabStrategy } from "@/lib/lab/strategies";
import { ordersPage } from "@/lib/ledger/orders";
import { ProviderReadsLimited, type ProviderReads } from "@/lib/ledger/provider-reads";
import { tallyAtProvider, type ProviderTally } from "@/lib/ledger/provider-tally";
import { mapWithLimit } from "@/lib/map-with-limit";
import { orderView, type OrderView, type OrderWithDetails } from "@/lib/orders/order-view";
import { PROVIDER_KEY_METADATA } from "@/lib/payments/stripe-provider";

/**
 * The orders page: a page of the account's orders, each with the payment
 * provider's own count of charges for the intent it was made under. For an
 * order of the checkout that count must be 1, and the page says so loudly
 * when it is not; the lab's broken strategies are there to show when it is not.
 */
export interface LedgerRow {
  order: OrderView;
  /** The lab storm that wrote it, for orders of the lab's broken strategies. */
  storm: { id: string; strategy: LabStrategy; size: number } | null;
  charges: ChargeCount;
}

/**
 * `scope` says what was counted: the charges under the order's key (the
 * checkout's provider key names its request), every charge of the lab storm
 * the order came from (one intent fired N times), or the order's own charge
 * (a keyless order outside a storm has nothing else to be counted with).
 */
export type ChargeCount =
  | { kind: "counted"; scope: "key" | "storm" | "order"; charges: number; amountCharged: number }
  | { kind: "unavailable"; detail: string }
  // The account's provider reads ran out: counted again once the window has room.
  | { kind: "limited"; retryAfterSeconds: number }
  // Paid before payments kept their provider key: nothing to look it up by.
  | { kind: "untracked" };

export type LedgerPage =
  { kind: "page"; rows: LedgerRow[]; hasMore: boolean } | { kind: "unknown-cursor" };

// Provider lookups for one page run this many at once.
const LOOKUPS_AT_ONCE = 4;

export async function ledgerPage(
  db: Database,
  reads: ProviderReads,
  accountId: string,
  params: ListParams,
): Promise<LedgerPage> {
  const page = await ordersPage(db, accountId, params);
  if (page.kind === "unknown-cursor") return page;

  const labCarts = page.orders
    .filter((order) => order.source !== "checkout")
    .map((order) => order.cartId);
  const storms =
    labCarts.length === 0
      ? []
      : await db.labStorm.findMany({ where: { accountId, cartId: { in: labCarts } } });
  const stormByCart = new Map(storms.map((storm) => [storm.cartId, storm]));

  const lookups = page.orders.map((order) => lookupFor(order, stormByCart.get(order.cartId)));
  // Many orders of one storm share one lookup.
  const distinct = [
    ...new Map(lookups.flatMap((lookup) => (lookup ? [[lookup.id, lookup]] : []))).values(),
  ];
  const tallies = await talliesWithin(reads, distinct);

  const rows = page.orders.map((order, index): LedgerRow => {
    const storm = stormByCart.get(order.cartId);
    const lookup = lookups[index];
    return {
      order: orderView(order),
      storm:
        storm && order.source !== "checkout"
          ? { id: storm.id, strategy: storm.strategy, size: storm.size }
          : null,
      charges: !lookup
        ? { kind: "untracked" }
        : tallies.kind === "limited"
          ? tallies
          : chargeCount(lookup.scope, tallies.byLookup.get(lookup.id)!),
    };
  });
  return { kind: "page", rows, hasMore: page.hasMore };
}

/** Every lookup of the page, or none of them when the account's provider reads would not cover them all. */
async function talliesWithin(
  reads: ProviderReads,
  lookups: readonly Lookup[],
): Promise<
  | { kind: "counted"; byLookup: Map<string, ProviderTally> }
  | { kind: "limited"; retryAfterSeconds: number }
> {
  try {
    await reads.reserve(lookups.length);
  } catch (error) {
    if (error instanceof ProviderReadsLimited)
      return { kind: "limited", retryAfterSeconds: error.retryAfterSeconds };
    throw error;
  }
  const tallies = await mapWithLimit(
    lookups,
    LOOKUPS_AT_ONCE,
    async (lookup) => [lookup.id, await tallyAtProvider(reads.records, lookup.metadata)] as const,
  );
  return { kind: "counted", byLookup: new Map(tallies) };
}

interface Lookup {
  id: string;
  scope: "key" | "storm" | "order";
  metadata: Record<string, string>;
}

function lookupFor(order: OrderWithDetails, storm: { id: string } | undefined): Lookup | undefined {
  if (order.source !== "checkout" && storm)
    return {
      id: `storm:${storm.id}`,
      scope: "storm",
      metadata: { [LAB_STORM_METADATA]: storm.id },
    };
  const providerKey = order.payment?.providerKey;
  if (!providerKey) return undefined;
  return {
    id: `key:${providerKey}`,
    scope: order.source === "checkout" ? "key" : "order",
    metadata: { [PROVIDER_KEY_METADATA]: providerKey },
  };
}

function chargeCount(scope: Lookup["scope"], tally: ProviderTally): ChargeCount {
  if (!tally.available) return { kind: "unavailable", detail: tally.detail };
  return { kind: "counted", scope, charges: tally.charges, amountCharged: tally.amountCharged };
}
