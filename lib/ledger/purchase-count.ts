import type { Database } from "@/lib/db/client";
import type { LabStorm } from "@/lib/generated/prisma/client";
import { LAB_STORM_METADATA } from "@/lib/lab/charge-tags";
import { ProviderReadsLimited, type ProviderReads } from "@/lib/ledger/provider-reads";
import { tallyAtProvider, type ProviderTally } from "@/lib/ledger/provider-tally";
import {
  purchaseCharges,
  summarisePurchase,
  type PurchaseCharges,
  type PurchaseSummary,
} from "@/lib/ledger/purchase";
import { mapWithLimit } from "@/lib/map-with-limit";
import type { OrderWithDetails } from "@/lib/orders/order-view";
import { PROVIDER_KEY_METADATA } from "@/lib/payments/stripe-provider";

/**
 * Purchases counted from the facts: all the account's orders of each cart
 * (on whatever page of the ledger they fall), and the charges the payment
 * provider holds for them, asked of the provider under what each order was
 * charged with: the checkout's provider key (every attempt of one
 * Idempotency-Key charges under it), the lab storm it was fired in, or a
 * keyless order's own provider key.
 */
export interface CountedPurchase {
  summary: PurchaseSummary;
  /** Newest first. */
  orders: OrderWithDetails[];
  /** The lab storm fired with this cart, if one was. */
  storm: LabStorm | null;
  /** Every order came from the real checkout. */
  checkout: boolean;
}

// Provider lookups run this many at once.
const LOOKUPS_AT_ONCE = 4;

export async function countPurchases(
  db: Database,
  reads: ProviderReads,
  accountId: string,
  cartIds: readonly string[],
): Promise<Map<string, CountedPurchase>> {
  if (cartIds.length === 0) return new Map();
  const [orders, storms] = await Promise.all([
    db.order.findMany({
      where: { accountId, cartId: { in: [...cartIds] } },
      orderBy: [{ createdAt: "desc" }, { id: "desc" }],
      include: { items: true, payment: true },
    }),
    db.labStorm.findMany({ where: { accountId, cartId: { in: [...cartIds] } } }),
  ]);
  const stormByCart = new Map(storms.map((storm) => [storm.cartId, storm]));

  const lookupsByCart = new Map<string, (Lookup | undefined)[]>();
  for (const order of orders) {
    const lookups = lookupsByCart.get(order.cartId) ?? [];
    lookups.push(lookupFor(order, stormByCart.get(order.cartId)));
    lookupsByCart.set(order.cartId, lookups);
  }
  // Many orders (a storm's, say) share one lookup.
  const distinct = [
    ...new Map(
      [...lookupsByCart.values()].flat().flatMap((lookup) => (lookup ? [[lookup.id, lookup]] : [])),
    ).values(),
  ];
  const tallies = await talliesWithin(reads, distinct);

  const counted = new Map<string, CountedPurchase>();
  for (const cartId of cartIds) {
    const ofCart = orders.filter((order) => order.cartId === cartId);
    const lookups = lookupsByCart.get(cartId) ?? [];
    const charges: PurchaseCharges = lookups.some((lookup) => !lookup)
      ? { kind: "untracked" }
      : tallies.kind === "limited"
        ? tallies
        : purchaseCharges(
            lookups.map((lookup) => tallies.byLookup.get(lookup!.id)!),
            ofCart[0]?.currency ?? "usd",
          );
    counted.set(cartId, {
      summary: summarisePurchase(cartId, ofCart.length, charges),
      orders: ofCart,
      storm: stormByCart.get(cartId) ?? null,
      checkout: ofCart.every((order) => order.source === "checkout"),
    });
  }
  return counted;
}

/** Every lookup, or none of them when the account's provider reads would not cover them all. */
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
  metadata: Record<string, string>;
}

function lookupFor(order: OrderWithDetails, storm: { id: string } | undefined): Lookup | undefined {
  if (order.source !== "checkout" && storm)
    return { id: `storm:${storm.id}`, metadata: { [LAB_STORM_METADATA]: storm.id } };
  const providerKey = order.payment?.providerKey;
  if (!providerKey) return undefined;
  return { id: `key:${providerKey}`, metadata: { [PROVIDER_KEY_METADATA]: providerKey } };
}
