import { z } from "zod";
import { FINISHED } from "@oncepay/idempotency";
import { RefundStatus } from "@/lib/generated/prisma/enums";
import { keyRequestsSchema } from "@/lib/ledger/key-requests";
import { CHECKOUT } from "@/lib/orders/checkout";
import { REFUND } from "@/lib/refunds/refund";

/**
 * One Idempotency-Key's life, from both sides, as GET /api/keys/{key} and
 * the key page show it: our row (state, recovery point and when it reached
 * each, lease, expiry, fingerprint), the requests that presented it, what it
 * made, and what the payment provider holds under the key's provider key.
 * A key is a checkout's or a refund's (`operation`); each has its own
 * recovery points, its own rows and its own records at the provider. The
 * OpenAPI document is made from these schemas, and the types are read from
 * them.
 */
const timestamp = z.iso.datetime();

const KEY_STATES = ["in_flight", "complete"] as const;
/** The checkout's recovery points (lib/orders/checkout.ts), and the completed key's. */
export const CHECKOUT_POINTS = ["claimed", "payment_started", "charged", FINISHED] as const;
/** The refund's recovery points (lib/refunds/refund.ts), and the completed key's. */
export const REFUND_POINTS = ["claimed", "refund_started", "provider_answered", FINISHED] as const;

const providerUnavailableSchema = z.object({
  available: z.literal(false),
  detail: z.string(),
  retryAfterSeconds: z.number().int().optional(),
});

/** What every key has, whichever operation it is for. */
const keyFields = {
  object: z.literal("idempotency_key"),
  key: z.string(),
  state: z.enum(KEY_STATES),
  lease: z
    .object({ owner: z.string(), expiresAt: timestamp, expired: z.boolean() })
    .nullable()
    .describe("Who holds the key while it is in flight; null once it is complete."),
  expiresAt: timestamp,
  fingerprint: z.string(),
  request: z
    .object({ method: z.string(), path: z.string() })
    .describe("The request the key stands for: its method, and its path as it was sent."),
  response: z.object({ status: z.number().int() }).nullable(),
  providerKey: z
    .string()
    .describe("The idempotency key the payment provider was asked under, for this request."),
  requests: keyRequestsSchema,
};
const reachedDescription =
  "When the key reached each recovery point (the database's clock); null if it has not.";
const providerDescription =
  "What the payment provider holds under the key. retryAfterSeconds: the account's provider reads ran out (GET /api/keys answers 429).";

export const providerPaymentViewSchema = z.object({
  id: z.string(),
  status: z.string(),
  amount: z.number().int(),
  currency: z.string(),
  createdAt: timestamp,
  charges: z.array(
    z.object({
      id: z.string(),
      status: z.string(),
      amount: z.number().int(),
      failureCode: z.string().nullable(),
      createdAt: timestamp,
    }),
  ),
});
export type ProviderPaymentView = z.infer<typeof providerPaymentViewSchema>;

export const checkoutKeySchema = z.object({
  object: keyFields.object,
  key: keyFields.key,
  operation: z.literal(CHECKOUT).describe("A checkout's key: POST /api/orders."),
  state: keyFields.state,
  recoveryPoint: z.enum(CHECKOUT_POINTS),
  reached: z
    .object({
      claimed: timestamp,
      paymentStarted: timestamp.nullable(),
      charged: timestamp.nullable(),
      finished: timestamp.nullable(),
    })
    .describe(reachedDescription),
  lease: keyFields.lease,
  expiresAt: keyFields.expiresAt,
  fingerprint: keyFields.fingerprint,
  request: keyFields.request,
  response: keyFields.response,
  providerKey: keyFields.providerKey,
  provider: z
    .discriminatedUnion("available", [
      z.object({ available: z.literal(true), paymentIntents: z.array(providerPaymentViewSchema) }),
      providerUnavailableSchema,
    ])
    .describe(providerDescription),
  order: z
    .object({
      id: z.uuid(),
      location: z.string(),
      amount: z.number().int(),
      currency: z.string(),
      createdAt: timestamp,
    })
    .nullable(),
  payments: z
    .array(
      z.object({
        providerPaymentId: z.string(),
        status: z.string(),
        amount: z.number().int(),
        currency: z.string(),
        declineCode: z.string().nullable(),
        settledBy: z
          .string()
          .nullable()
          .describe(
            "Who settled a payment that waited on the shopper's bank (webhook, recovery); null when the provider's answer to the checkout did.",
          ),
        events: z
          .array(
            z.object({
              eventId: z.string(),
              type: z.string(),
              outcome: z.string(),
              receivedAt: timestamp,
            }),
          )
          .describe(
            "The provider's events the shop acted on for this payment, each once, with what it did.",
          ),
      }),
    )
    .describe("Our payment rows for the key: the paid one, the pending one, or the decline."),
  requests: keyFields.requests,
});
export type CheckoutKeyInspection = z.infer<typeof checkoutKeySchema>;

export const providerRefundViewSchema = z.object({
  id: z.string(),
  status: z.string(),
  amount: z.number().int(),
  currency: z.string(),
  createdAt: timestamp,
});
export type ProviderRefundView = z.infer<typeof providerRefundViewSchema>;

export const refundKeySchema = z.object({
  object: keyFields.object,
  key: keyFields.key,
  operation: z.literal(REFUND).describe("A refund's key: POST /api/orders/{id}/refunds."),
  state: keyFields.state,
  recoveryPoint: z.enum(REFUND_POINTS),
  reached: z
    .object({
      claimed: timestamp,
      refundStarted: timestamp.nullable(),
      providerAnswered: timestamp.nullable(),
      finished: timestamp.nullable(),
    })
    .describe(reachedDescription),
  lease: keyFields.lease,
  expiresAt: keyFields.expiresAt,
  fingerprint: keyFields.fingerprint,
  request: keyFields.request,
  response: keyFields.response,
  providerKey: keyFields.providerKey,
  provider: z
    .discriminatedUnion("available", [
      z.object({
        available: z.literal(true),
        paymentIntent: z
          .string()
          .nullable()
          .describe("The refunded order's PaymentIntent; null when the key names no paid order."),
        refunds: z
          .array(providerRefundViewSchema)
          .describe("The PaymentIntent's refunds made under this key's provider key."),
      }),
      providerUnavailableSchema,
    ])
    .describe(providerDescription),
  refund: z
    .object({
      id: z.uuid(),
      orderId: z.uuid(),
      orderLocation: z.string(),
      amount: z.number().int(),
      currency: z.string(),
      status: z.enum(RefundStatus),
      providerRefundId: z.string().nullable(),
      refusalCode: z.string().nullable(),
      createdAt: timestamp,
      completedAt: timestamp.nullable(),
    })
    .nullable()
    .describe(
      "Our refund row for the key: pending from the claim until the provider answered, then succeeded or refused. Null when it made none (nothing left to refund, no such order).",
    ),
  requests: keyFields.requests,
});
export type RefundKeyInspection = z.infer<typeof refundKeySchema>;

export const keyInspectionSchema = z.discriminatedUnion("operation", [
  checkoutKeySchema,
  refundKeySchema,
]);
export type KeyInspection = z.infer<typeof keyInspectionSchema>;
