import type { Database } from "@/lib/db/client";
import { mapWithLimit } from "@/lib/map-with-limit";
import {
  reachedAt,
  recoveryPointOf,
  type CommonKeyFields,
  type KeyRow,
} from "@/lib/ledger/key-row";
import {
  CHECKOUT_POINTS,
  type CheckoutKeyInspection,
  type ProviderPaymentView,
} from "@/lib/ledger/key-inspection-schema";
import { providerReadFailure } from "@/lib/ledger/key-provider-reads";
import type { ProviderReads } from "@/lib/ledger/provider-reads";
import { CHECKOUT } from "@/lib/orders/checkout";
import { orderLocation } from "@/lib/orders/order-view";
import { paymentProviderKey } from "@/lib/orders/provider-key";
import type { ProviderCharge, ProviderPayment } from "@/lib/payments/provider";
import { PROVIDER_KEY_METADATA } from "@/lib/payments/stripe-provider";

/**
 * A checkout's key: POST /api/orders, the order and payment rows it wrote,
 * and the PaymentIntents the provider holds under its provider key, each
 * with its charges.
 */
export async function inspectCheckoutKey(
  db: Database,
  reads: ProviderReads,
  accountId: string,
  row: KeyRow,
  common: CommonKeyFields,
): Promise<CheckoutKeyInspection> {
  const providerKey = paymentProviderKey(
    { accountId, idempotencyKey: row.idem_key, fingerprint: row.fingerprint },
    row.side_effect_generation,
  );
  const [order, payments, provider] = await Promise.all([
    db.order.findUnique({
      where: { idempotencyKeyId: row.id },
      select: { id: true, totalAmount: true, currency: true, createdAt: true },
    }),
    db.payment.findMany({ where: { idempotencyKeyId: row.id }, orderBy: { createdAt: "asc" } }),
    providerView(reads, providerKey),
  ]);
  const events = await db.webhookEvent.findMany({
    where: { providerPaymentId: { in: payments.map((payment) => payment.providerPaymentId) } },
    orderBy: [{ receivedAt: "asc" }, { eventId: "asc" }],
  });
  const { requests, ...fields } = common;
  return {
    object: fields.object,
    key: fields.key,
    operation: CHECKOUT,
    state: fields.state,
    recoveryPoint: recoveryPointOf(row, CHECKOUT_POINTS),
    reached: {
      claimed: row.created_at.toISOString(),
      paymentStarted: reachedAt(row, "payment_started"),
      charged: reachedAt(row, "charged"),
      finished: row.completed_at?.toISOString() ?? null,
    },
    lease: fields.lease,
    expiresAt: fields.expiresAt,
    fingerprint: fields.fingerprint,
    request: { method: "POST", path: "/api/orders" },
    response: fields.response,
    providerKey,
    provider,
    order: order && {
      id: order.id,
      location: orderLocation(order.id),
      amount: order.totalAmount,
      currency: order.currency,
      createdAt: order.createdAt.toISOString(),
    },
    payments: payments.map((payment) => ({
      providerPaymentId: payment.providerPaymentId,
      status: payment.status,
      amount: payment.amount,
      currency: payment.currency,
      declineCode: payment.declineCode,
      settledBy: payment.settledBy,
      events: events
        .filter((event) => event.providerPaymentId === payment.providerPaymentId)
        .map((event) => ({
          eventId: event.eventId,
          type: event.type,
          outcome: event.outcome,
          receivedAt: event.receivedAt.toISOString(),
        })),
    })),
    requests,
  };
}

// A provider key names one PaymentIntent, but a lookup that found more would
// be the very thing to show, so each found one is listed with its charges.
// Each lookup is reserved from the account's provider reads before it is made.
async function providerView(
  reads: ProviderReads,
  providerKey: string,
): Promise<CheckoutKeyInspection["provider"]> {
  const { records } = reads;
  try {
    await reads.reserve(1);
    const intents = await records.findPayments({ [PROVIDER_KEY_METADATA]: providerKey });
    await reads.reserve(intents.length);
    const charges = await mapWithLimit(intents, 4, (intent) => records.chargesOf(intent.id));
    return {
      available: true,
      paymentIntents: intents.map((intent, index) => paymentView(intent, charges[index]!)),
    };
  } catch (error) {
    return providerReadFailure(error);
  }
}

function paymentView(intent: ProviderPayment, charges: ProviderCharge[]): ProviderPaymentView {
  return {
    id: intent.id,
    status: intent.status,
    amount: intent.amount,
    currency: intent.currency,
    createdAt: intent.createdAt.toISOString(),
    charges: charges.map((charge) => ({
      id: charge.id,
      status: charge.status,
      amount: charge.amount,
      failureCode: charge.failureCode,
      createdAt: charge.createdAt.toISOString(),
    })),
  };
}
