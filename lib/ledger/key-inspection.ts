import type { Database } from "@/lib/db/client";
import { z } from "zod";
import { FINISHED } from "@oncepay/idempotency";
import { mapWithLimit } from "@/lib/map-with-limit";
import { keyRequestsOf, keyRequestsSchema } from "@/lib/ledger/key-requests";
import { CHECKOUT } from "@/lib/orders/checkout";
import { orderLocation } from "@/lib/orders/order-view";
import { paymentProviderKey } from "@/lib/orders/provider-key";
import {
  ProviderReadsLimited,
  providerReadsLimitedDetail,
  type ProviderReads,
} from "@/lib/ledger/provider-reads";
import { providerUnreachable } from "@/lib/ledger/provider-tally";
import {
  PaymentLookupError,
  type ProviderCharge,
  type ProviderPayment,
} from "@/lib/payments/provider";
import { PROVIDER_KEY_METADATA } from "@/lib/payments/stripe-provider";

/**
 * One Idempotency-Key's life, from both sides: our row (state, recovery
 * point and when it reached each, lease, expiry, fingerprint), the requests
 * that presented it, what it produced (the order, the payment rows), and
 * what the payment provider
 * holds under the key's provider key (its PaymentIntents and their charges).
 * GET /api/keys/{key} and the key page show this; the OpenAPI document is
 * made from this schema, and the type is read from it.
 */
export const providerPaymentViewSchema = z.object({
  id: z.string(),
  status: z.string(),
  amount: z.number().int(),
  currency: z.string(),
  createdAt: z.iso.datetime(),
  charges: z.array(
    z.object({
      id: z.string(),
      status: z.string(),
      amount: z.number().int(),
      failureCode: z.string().nullable(),
      createdAt: z.iso.datetime(),
    }),
  ),
});
export type ProviderPaymentView = z.infer<typeof providerPaymentViewSchema>;

const timestamp = z.iso.datetime();

const KEY_STATES = ["in_flight", "complete"] as const;
/** The checkout's recovery points (lib/orders/checkout.ts), and the completed key's. */
const RECOVERY_POINTS = ["claimed", "payment_started", "charged", FINISHED] as const;

/** The request each operation's keys are for: the engine keeps the operation's name, the fingerprint the rest. */
const OPERATION_REQUESTS: Record<string, { method: string; path: string }> = {
  [CHECKOUT]: { method: "POST", path: "/api/orders" },
};

export const keyInspectionSchema = z.object({
  object: z.literal("idempotency_key"),
  key: z.string(),
  state: z.enum(KEY_STATES),
  recoveryPoint: z.enum(RECOVERY_POINTS),
  reached: z
    .object({
      claimed: timestamp,
      paymentStarted: timestamp.nullable(),
      charged: timestamp.nullable(),
      finished: timestamp.nullable(),
    })
    .describe(
      "When the key reached each recovery point (the database's clock); null if it has not.",
    ),
  lease: z
    .object({ owner: z.string(), expiresAt: timestamp, expired: z.boolean() })
    .nullable()
    .describe("Who holds the key while it is in flight; null once it is complete."),
  expiresAt: timestamp,
  fingerprint: z.string(),
  request: z.object({ method: z.string(), path: z.string() }),
  response: z.object({ status: z.number().int() }).nullable(),
  providerKey: z.string(),
  provider: z
    .discriminatedUnion("available", [
      z.object({ available: z.literal(true), paymentIntents: z.array(providerPaymentViewSchema) }),
      z.object({
        available: z.literal(false),
        detail: z.string(),
        retryAfterSeconds: z.number().int().optional(),
      }),
    ])
    .describe(
      "What the payment provider holds under the key. retryAfterSeconds: the account's provider reads ran out (GET /api/keys answers 429).",
    ),
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
      }),
    )
    .describe("Our payment rows for the key: the paid one, or the decline."),
  requests: keyRequestsSchema,
});
export type KeyInspection = z.infer<typeof keyInspectionSchema>;

interface KeyRow {
  id: string;
  idem_key: string;
  state: KeyInspection["state"];
  recovery_point: KeyInspection["recoveryPoint"];
  operation: string;
  created_at: Date;
  points_reached: { payment_started?: string; charged?: string };
  completed_at: Date | null;
  lease_owner: string | null;
  lease_expires_at: Date | null;
  lease_expired: boolean | null;
  expires_at: Date;
  fingerprint: string;
  response_status: number | null;
  side_effect_generation: number;
}

// What an Idempotency-Key can be (DESIGN.md): 1 to 255 printable ASCII characters.
const POSSIBLE_KEY = /^[\x21-\x7e]{1,255}$/;

/** The account's own key, or undefined: another account's key is as absent as one that never was. */
export async function inspectKey(
  db: Database,
  reads: ProviderReads,
  accountId: string,
  key: string,
): Promise<KeyInspection | undefined> {
  if (!POSSIBLE_KEY.test(key)) return undefined;
  // Lease expiry by the database's clock, as the engine decides it.
  const rows = await db.$queryRaw<KeyRow[]>`
    SELECT id, idem_key, state, recovery_point, operation, created_at, points_reached, completed_at,
           lease_owner, lease_expires_at, lease_expires_at <= now() AS lease_expired,
           expires_at, fingerprint, side_effect_generation, response_status
      FROM idempotency_keys
     WHERE scope = ${accountId} AND idem_key = ${key}`;
  const row = rows[0];
  if (!row) return undefined;

  const providerKey = paymentProviderKey(
    {
      accountId,
      idempotencyKey: row.idem_key,
      fingerprint: row.fingerprint,
    },
    row.side_effect_generation,
  );
  const [order, payments, requests, provider] = await Promise.all([
    db.order.findUnique({
      where: { idempotencyKeyId: row.id },
      select: { id: true, totalAmount: true, currency: true, createdAt: true },
    }),
    db.payment.findMany({ where: { idempotencyKeyId: row.id }, orderBy: { createdAt: "asc" } }),
    keyRequestsOf(db, row.id),
    providerView(reads, providerKey),
  ]);
  return {
    object: "idempotency_key",
    key: row.idem_key,
    state: row.state,
    recoveryPoint: row.recovery_point,
    reached: {
      claimed: row.created_at.toISOString(),
      paymentStarted: isoTime(row.points_reached.payment_started),
      charged: isoTime(row.points_reached.charged),
      finished: row.completed_at?.toISOString() ?? null,
    },
    lease:
      row.lease_owner && row.lease_expires_at
        ? {
            owner: row.lease_owner,
            expiresAt: row.lease_expires_at.toISOString(),
            expired: row.lease_expired === true,
          }
        : null,
    expiresAt: row.expires_at.toISOString(),
    fingerprint: row.fingerprint,
    request: OPERATION_REQUESTS[row.operation] ?? { method: "?", path: row.operation },
    response: row.response_status === null ? null : { status: row.response_status },
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
    })),
    requests,
  };
}

/** A time the database wrote into JSON, as the API writes times. */
function isoTime(jsonTime: string | undefined): string | null {
  return jsonTime === undefined ? null : new Date(jsonTime).toISOString();
}

// A provider key names one PaymentIntent, but a lookup that found more would
// be the very thing to show, so each found one is listed with its charges.
// Each lookup is reserved from the account's provider reads before it is made.
async function providerView(
  reads: ProviderReads,
  providerKey: string,
): Promise<KeyInspection["provider"]> {
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
    if (error instanceof PaymentLookupError) return providerUnreachable(error);
    if (error instanceof ProviderReadsLimited)
      return {
        available: false,
        detail: providerReadsLimitedDetail(error.retryAfterSeconds),
        retryAfterSeconds: error.retryAfterSeconds,
      };
    throw error;
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
