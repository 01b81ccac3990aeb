import Stripe from "stripe";
import type { Settlement } from "@/lib/payments/settle";
import { PROVIDER_KEY_METADATA } from "@/lib/payments/stripe-provider";
import { stripeEventSchema } from "@/lib/webhooks/receipt";

/**
 * A Stripe event as the shop acts on it, read from a body whose signature
 * the SDK's own check accepted (`constructEvent`: HMAC-SHA256 of
 * `<t>.<raw body>` with the endpoint's secret, and `t` within the
 * tolerance). Only what the shop needs is kept:
 *
 *   payment_intent.succeeded       settle the payment succeeded
 *   payment_intent.payment_failed  settle it declined, with the failure's code
 *   charge.refunded                noted: refunds are the shop's own requests
 *                                  (lib/refunds), recorded when made
 *   anything else                  ignored, and still recorded, so it is acted on once
 */
export type ProviderEvent =
  | {
      id: string;
      type: string;
      kind: "payment";
      paymentIntentId: string;
      settlement: Settlement;
      /** Carries the shop's provider key in its metadata: one of the shop's own payments. */
      ours: boolean;
    }
  | { id: string; type: string; kind: "refund"; paymentIntentId: string | null }
  | { id: string; type: string; kind: "other" };

/** Stripe's own default: a signature more than five minutes old is refused, against replays. */
export const SIGNATURE_TOLERANCE_SECONDS = 300;

/** Why a delivery is refused: its signature, or a signed body that is no event. */
export class EventRefused extends Error {
  constructor(
    readonly reason: "signature" | "malformed",
    message: string,
  ) {
    super(message);
  }
}

export function verifiedStripeEvent(
  rawBody: Uint8Array,
  signature: string | null,
  secret: string,
): ProviderEvent {
  if (!signature)
    throw new EventRefused("signature", "The request has no Stripe-Signature header.");
  let event: Stripe.Event;
  try {
    event = Stripe.webhooks.constructEvent(
      Buffer.from(rawBody),
      signature,
      secret,
      SIGNATURE_TOLERANCE_SECONDS,
    );
  } catch (error) {
    // The SDK checks the signature first, then parses: a SyntaxError means a signed body that is not JSON.
    if (error instanceof SyntaxError)
      throw new EventRefused("malformed", "The signed body is not JSON.");
    throw new EventRefused(
      "signature",
      error instanceof Error ? error.message : "The signature does not verify.",
    );
  }
  const parsed = stripeEventSchema.safeParse(event);
  if (!parsed.success)
    throw new EventRefused(
      "malformed",
      "The signed body is not a Stripe event (id, type, data.object).",
    );
  return providerEvent(event);
}

function providerEvent(event: Stripe.Event): ProviderEvent {
  const base = { id: event.id, type: event.type };
  switch (event.type) {
    case "payment_intent.succeeded":
    case "payment_intent.payment_failed": {
      const intent = event.data.object;
      const error = intent.last_payment_error;
      return {
        ...base,
        kind: "payment",
        paymentIntentId: intent.id,
        settlement:
          event.type === "payment_intent.succeeded"
            ? { status: "succeeded" }
            : {
                status: "declined",
                declineCode: error?.decline_code || error?.code || "payment_failed",
              },
        ours: typeof intent.metadata?.[PROVIDER_KEY_METADATA] === "string",
      };
    }
    case "charge.refunded": {
      const intent = event.data.object.payment_intent;
      return {
        ...base,
        kind: "refund",
        paymentIntentId: typeof intent === "string" ? intent : (intent?.id ?? null),
      };
    }
    default:
      return { ...base, kind: "other" };
  }
}
