import type Stripe from "stripe";
import type { ProviderCharge, ProviderPayment, ProviderRefund } from "@/lib/payments/provider";

/**
 * Stripe's objects as OncePay reads them back (the ledger, the key
 * inspector, the lab's counts), and the one search query it sends: the
 * translation only, so stripe-provider.ts keeps to talking to Stripe.
 */

// Nothing in this alphabet can close the quote around a key or value and
// start another clause (query injection); uuids and provider keys fit.
const SEARCHABLE = /^[A-Za-z0-9:_-]+$/;

/** `metadata['k']:'v' AND …`; refusing, rather than escaping, since the simulator's parser reads no escapes. */
export function metadataQuery(metadata: Record<string, string>): string {
  const pairs = Object.entries(metadata);
  if (pairs.length === 0)
    throw new Error(
      "findPayments needs at least one metadata pair: an empty query would match every payment.",
    );
  for (const [key, value] of pairs) {
    if (!SEARCHABLE.test(key) || !SEARCHABLE.test(value)) {
      throw new Error(
        `Metadata to search for must be of [A-Za-z0-9:_-] (no quotes or spaces): ${JSON.stringify(key)}: ${JSON.stringify(value)}`,
      );
    }
  }
  return pairs.map(([key, value]) => `metadata['${key}']:'${value}'`).join(" AND ");
}

export function providerPayment(intent: Stripe.PaymentIntent): ProviderPayment {
  return {
    id: intent.id,
    status: intent.status,
    amount: intent.amount,
    currency: intent.currency,
    createdAt: new Date(intent.created * 1000),
    metadata: { ...intent.metadata },
  };
}

export function providerCharge(charge: Stripe.Charge, askedFor: string): ProviderCharge {
  const intent = charge.payment_intent;
  return {
    id: charge.id,
    paymentIntentId: (typeof intent === "string" ? intent : intent?.id) ?? askedFor,
    status: charge.status,
    amount: charge.amount,
    currency: charge.currency,
    failureCode: charge.failure_code ?? null,
    createdAt: new Date(charge.created * 1000),
  };
}

export function providerRefund(refund: Stripe.Refund, askedFor: string): ProviderRefund {
  const intent = refund.payment_intent;
  return {
    id: refund.id,
    paymentIntentId: (typeof intent === "string" ? intent : intent?.id) ?? askedFor,
    amount: refund.amount,
    currency: refund.currency,
    // Stripe's spec lets a refund's status be null; OncePay reads "unknown" rather than guess.
    status: refund.status ?? "unknown",
    createdAt: new Date(refund.created * 1000),
    metadata: { ...refund.metadata },
  };
}
