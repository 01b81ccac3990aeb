import type { Database } from "@/lib/db/client";
import { mapWithLimit } from "@/lib/map-with-limit";
import {
  checkRefunds,
  type OrderRefundCheck,
  type ProviderRefunds,
} from "@/lib/ledger/refund-check";
import { ProviderReadsLimited, type ProviderReads } from "@/lib/ledger/provider-reads";
import { providerUnreachable } from "@/lib/ledger/provider-tally";
import type { OrderWithDetails } from "@/lib/orders/order-view";
import { PaymentLookupError } from "@/lib/payments/provider";

/**
 * The refunds of a page of orders, from both sides (lib/ledger/
 * refund-check.ts compares them): our refund rows, and the refunds the
 * payment provider holds for each order's PaymentIntent, listed from its
 * own records. Every paid order is asked about, refunded by us or not: a
 * refund made at the provider behind the shop's back is exactly what the
 * check is for.
 *
 * The provider's lists are reserved from the account's provider reads as
 * the charge count's lookups are (lib/ledger/provider-reads.ts), all of a
 * page or none, after them: when the window has no room left, the refunds
 * go unchecked and the charges are still counted.
 */

// Provider lookups run this many at once, as the charge count's do.
const LOOKUPS_AT_ONCE = 4;

/** Each paid order's check, by order id; orders without a successful payment have none. */
export async function checkOrderRefunds(
  db: Database,
  reads: ProviderReads,
  orders: readonly OrderWithDetails[],
): Promise<Map<string, OrderRefundCheck>> {
  const paid = orders.flatMap((order) =>
    order.payment?.status === "succeeded" ? [{ order, payment: order.payment }] : [],
  );
  if (paid.length === 0) return new Map();

  const [rows, provider] = await Promise.all([
    db.refund.findMany({
      where: { orderId: { in: paid.map(({ order }) => order.id) } },
      orderBy: [{ createdAt: "asc" }, { id: "asc" }],
    }),
    refundsAtProvider(
      reads,
      paid.map(({ payment }) => payment.providerPaymentId),
    ),
  ]);

  return new Map(
    paid.map(({ order, payment }, index) => [
      order.id,
      checkRefunds(
        payment,
        rows
          .filter((row) => row.orderId === order.id)
          .map((row) => ({
            id: row.id,
            amount: row.amount,
            currency: row.currency,
            status: row.status,
            createdAt: row.createdAt.toISOString(),
            idempotencyKey: row.idemKey,
            providerRefundId: row.providerRefundId,
            providerKey: row.providerKey,
            refusalCode: row.refusalCode,
          })),
        provider[index]!,
      ),
    ]),
  );
}

/** The provider's refunds of each PaymentIntent, in the order asked; each lookup that failed says so on its own. */
async function refundsAtProvider(
  reads: ProviderReads,
  paymentIntentIds: readonly string[],
): Promise<ProviderRefunds[]> {
  try {
    await reads.reserve(paymentIntentIds.length);
  } catch (error) {
    if (!(error instanceof ProviderReadsLimited)) throw error;
    const limited = { kind: "limited", retryAfterSeconds: error.retryAfterSeconds } as const;
    return paymentIntentIds.map(() => limited);
  }
  return mapWithLimit(paymentIntentIds, LOOKUPS_AT_ONCE, async (id): Promise<ProviderRefunds> => {
    try {
      const refunds = await reads.records.refundsOf(id);
      return {
        kind: "read",
        refunds: refunds.map((refund) => ({
          id: refund.id,
          amount: refund.amount,
          currency: refund.currency,
          status: refund.status,
          createdAt: refund.createdAt.toISOString(),
          metadata: refund.metadata,
        })),
      };
    } catch (error) {
      if (!(error instanceof PaymentLookupError)) throw error;
      return { kind: "unavailable", detail: providerUnreachable(error).detail };
    }
  });
}
