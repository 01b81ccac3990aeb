import type { Database } from "@/lib/db/client";
import { providerReadFailure } from "@/lib/ledger/key-provider-reads";
import {
  REFUND_POINTS,
  type ProviderRefundView,
  type RefundKeyInspection,
} from "@/lib/ledger/key-inspection-schema";
import {
  reachedAt,
  recoveryPointOf,
  type CommonKeyFields,
  type KeyRow,
} from "@/lib/ledger/key-row";
import type { ProviderReads } from "@/lib/ledger/provider-reads";
import { orderLocation } from "@/lib/orders/order-view";
import { PROVIDER_KEY_METADATA } from "@/lib/payments/stripe-provider";
import { refundProviderKey } from "@/lib/refunds/provider-key";
import { REFUND } from "@/lib/refunds/refund";
import { refundRequestSchema } from "@/lib/refunds/refund-request";

/**
 * A refund's key: POST /api/orders/{id}/refunds for the order its stored
 * request names, the refund row it wrote, and the refunds the provider
 * holds for that order's PaymentIntent under the key's provider key (the
 * provider keeps the key it was asked under in each refund's metadata).
 */
export async function inspectRefundKey(
  db: Database,
  reads: ProviderReads,
  accountId: string,
  row: KeyRow,
  common: CommonKeyFields,
): Promise<RefundKeyInspection> {
  const providerKey = refundProviderKey(
    { scope: accountId, key: row.idem_key, fingerprint: row.fingerprint, keyId: row.id },
    row.side_effect_generation,
  );
  const refund = await db.refund.findUnique({ where: { idempotencyKeyId: row.id } });
  // The claim keeps the request as the engine read it; a refund row knows its order too.
  const orderId = storedOrderId(row.request) ?? refund?.orderId ?? null;
  const order = orderId
    ? await db.order.findFirst({
        where: { id: orderId, accountId },
        select: { payment: { select: { providerPaymentId: true, status: true } } },
      })
    : null;
  const paid = order?.payment?.status === "succeeded" ? order.payment.providerPaymentId : null;

  const { requests, ...fields } = common;
  return {
    object: fields.object,
    key: fields.key,
    operation: REFUND,
    state: fields.state,
    recoveryPoint: recoveryPointOf(row, REFUND_POINTS),
    reached: {
      claimed: row.created_at.toISOString(),
      refundStarted: reachedAt(row, "refund_started"),
      providerAnswered: reachedAt(row, "provider_answered"),
      finished: row.completed_at?.toISOString() ?? null,
    },
    lease: fields.lease,
    expiresAt: fields.expiresAt,
    fingerprint: fields.fingerprint,
    request: {
      method: "POST",
      path: `/api/orders/${orderId ?? "{id}"}/refunds`,
    },
    response: fields.response,
    providerKey,
    provider: await providerView(reads, paid, providerKey),
    refund: refund && {
      id: refund.id,
      orderId: refund.orderId,
      orderLocation: orderLocation(refund.orderId),
      amount: refund.amount,
      currency: refund.currency,
      status: refund.status,
      providerRefundId: refund.providerRefundId,
      refusalCode: refund.refusalCode,
      createdAt: refund.createdAt.toISOString(),
      completedAt: refund.completedAt?.toISOString() ?? null,
    },
    requests,
  };
}

function storedOrderId(request: unknown): string | null {
  const parsed = refundRequestSchema.safeParse(request);
  return parsed.success ? parsed.data.orderId : null;
}

/**
 * The order's refunds at the provider made under this key's provider key:
 * one at most, if the provider keeps its word; more would be the very thing
 * to show. A key that names no paid order has nothing there to ask about.
 */
async function providerView(
  reads: ProviderReads,
  paymentIntentId: string | null,
  providerKey: string,
): Promise<RefundKeyInspection["provider"]> {
  if (paymentIntentId === null) return { available: true, paymentIntent: null, refunds: [] };
  try {
    await reads.reserve(1);
    const refunds = await reads.records.refundsOf(paymentIntentId);
    return {
      available: true,
      paymentIntent: paymentIntentId,
      refunds: refunds
        .filter((refund) => refund.metadata[PROVIDER_KEY_METADATA] === providerKey)
        .reverse()
        .map((refund): ProviderRefundView => ({
          id: refund.id,
          status: refund.status,
          amount: refund.amount,
          currency: refund.currency,
          createdAt: refund.createdAt.toISOString(),
        })),
    };
  } catch (error) {
    return providerReadFailure(error);
  }
}
