import type { Database } from "@/lib/db/client";
import type { ListParams } from "@/lib/http/list-params";
import type { LabStrategy } from "@/lib/lab/strategies";
import { checkFulfilment, type OrderFulfilment } from "@/lib/ledger/order-fulfilment";
import { checkOrderRefunds } from "@/lib/ledger/order-refunds";
import { ordersPage } from "@/lib/ledger/orders";
import { countPurchases } from "@/lib/ledger/purchase-count";
import { groupByPurchase, type PurchaseCharges, type PurchaseVerdict } from "@/lib/ledger/purchase";
import type { ProviderReads } from "@/lib/ledger/provider-reads";
import type { OrderRefundCheck } from "@/lib/ledger/refund-check";
import { orderView, type OrderView } from "@/lib/orders/order-view";

/**
 * The orders page: a page of the account's orders, grouped by purchase (the
 * cart they were paid for, lib/ledger/purchase.ts), each purchase with the
 * payment provider's own count of its charges. A purchase of the checkout
 * must come to 1, and the page says so loudly when it does not; the lab's
 * broken strategies are there to show when it does not. Each paid order
 * comes with its refunds, ours against the provider's (refund-check.ts),
 * and every order with its shipments against its status (order-fulfilment.ts).
 */
export interface LedgerPurchase {
  cartId: string;
  /** This page's orders of the purchase, newest first. */
  rows: LedgerRow[];
  /** All the purchase's orders, on this page or another. */
  orders: number;
  charges: PurchaseCharges;
  verdict: PurchaseVerdict;
  /** Every order of the purchase came from the real checkout (not the lab's broken strategies). */
  checkout: boolean;
}

export interface LedgerRow {
  order: OrderView;
  /** The lab storm that wrote it, for orders of the lab's broken strategies. */
  storm: { id: string; strategy: LabStrategy; size: number } | null;
  /** Its refunds, ours and the provider's; null for an order without a successful payment. */
  refunds: OrderRefundCheck | null;
  /** Its shipments against its status, and the provider's events about its payment. */
  fulfilment: OrderFulfilment;
}

export type LedgerPage =
  { kind: "page"; purchases: LedgerPurchase[]; hasMore: boolean } | { kind: "unknown-cursor" };

export async function ledgerPage(
  db: Database,
  reads: ProviderReads,
  accountId: string,
  params: ListParams,
): Promise<LedgerPage> {
  const page = await ordersPage(db, accountId, params);
  if (page.kind === "unknown-cursor") return page;

  const groups = groupByPurchase(page.orders, (order) => order.cartId);
  const counted = await countPurchases(
    db,
    reads,
    accountId,
    groups.map((group) => group.cartId),
  );
  // After the charges: those lookups come first when the account's provider reads run short.
  const [refunds, fulfilment] = await Promise.all([
    checkOrderRefunds(db, reads, page.orders),
    checkFulfilment(db, page.orders),
  ]);
  const purchases = groups.map(({ cartId, rows }): LedgerPurchase => {
    const purchase = counted.get(cartId)!;
    return {
      cartId,
      rows: rows.map((order) => {
        const storm = purchase.storm;
        return {
          order: orderView(order),
          storm:
            storm && order.source !== "checkout"
              ? { id: storm.id, strategy: storm.strategy, size: storm.size }
              : null,
          refunds: refunds.get(order.id) ?? null,
          fulfilment: fulfilment.get(order.id)!,
        };
      }),
      orders: purchase.summary.orders,
      charges: purchase.summary.charges,
      verdict: purchase.summary.verdict,
      checkout: purchase.checkout,
    };
  });
  return { kind: "page", purchases, hasMore: page.hasMore };
}
