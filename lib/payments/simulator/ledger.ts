import type pg from "pg";
import { testCard, type CardOutcome } from "@/lib/payments/simulator/cards";
import {
  docUrl,
  errorResponse,
  jsonResponse,
  type ApiResponse,
  type StripeError,
} from "@/lib/payments/simulator/errors";
import { recordEvent, type EventOrigin } from "@/lib/payments/simulator/events";
import { clientSecretFor, newId } from "@/lib/payments/simulator/ids";
import { chargeObject, paymentIntentObject, refundObject } from "@/lib/payments/simulator/objects";
import { refundsOfIntents } from "@/lib/payments/simulator/refund-ledger";
import type {
  AutomaticPaymentMethods,
  CreatePaymentIntentParams,
} from "@/lib/payments/simulator/params";

/**
 * The ledger: payment intents and the charges made for them (objects.ts
 * draws the Stripe objects the API shows for them). A confirmed payment
 * intent and its charge are written together, inside the caller's
 * transaction (which also stores the response under the Idempotency-Key), so
 * the ledger never holds a charge whose answer was not recorded, nor an
 * answer without its charge.
 */
export interface PaymentIntentRow {
  id: string;
  account: string;
  amount: string;
  currency: string;
  status: string;
  payment_method: string | null;
  payment_method_types: string[];
  latest_charge: string | null;
  last_payment_error: StripeError | null;
  client_secret: string;
  description: string | null;
  metadata: Record<string, string>;
  automatic_payment_methods: AutomaticPaymentMethods | null;
  idempotency_key: string | null;
  return_url: string | null;
  /** What the shopper must do while the intent is `requires_action`: the challenge page's address. */
  next_action: NextAction | null;
  created: string;
}

export interface NextAction {
  type: "redirect_to_url";
  redirect_to_url: { url: string; return_url: string | null };
}

/** What creating an intent needs beyond its parameters. */
export interface CreateContext extends EventOrigin {
  /** The challenge page of an intent that asks for 3-D Secure (authentication.ts). */
  challengeUrl(paymentIntent: string, clientSecret: string): string;
}

export interface ChargeRow {
  id: string;
  account: string;
  payment_intent: string;
  amount: string;
  currency: string;
  status: "succeeded" | "failed";
  payment_method: string;
  failure_code: string | null;
  decline_code: string | null;
  failure_message: string | null;
  /** How much of it refunds have given back (refund-ledger.ts); 0 for a failed charge. */
  amount_refunded: string;
  created: string;
}

/**
 * POST /v1/payment_intents. With `confirm=true` the card is charged at once,
 * as Stripe does: a success is 200 and a `succeeded` intent; a decline still
 * creates the intent (back to `requires_payment_method`) and a failed charge,
 * and is answered 402 card_error carrying that intent; a card that asks for
 * 3-D Secure leaves it `requires_action`, charging nothing until the
 * challenge page settles it. Each settled outcome records its event.
 */
export async function createPaymentIntent(
  tx: pg.PoolClient,
  account: string,
  params: CreatePaymentIntentParams,
  idempotencyKey: string | null,
  context: CreateContext,
): Promise<ApiResponse> {
  const id = newId("pi");
  const clientSecret = clientSecretFor(id);
  const base = { id, clientSecret, account, params, idempotencyKey, nextAction: null };
  const origin: EventOrigin = { requestId: context.requestId, idempotencyKey };
  if (!params.confirm || !params.paymentMethod) {
    const intent = await insertPaymentIntent(tx, {
      ...base,
      status: params.paymentMethod ? "requires_confirmation" : "requires_payment_method",
      paymentMethod: params.paymentMethod,
      latestCharge: null,
      lastPaymentError: null,
    });
    return jsonResponse(200, paymentIntentObject(intent));
  }

  const paymentMethod = params.paymentMethod;
  // parseCreatePaymentIntent accepted only known test cards.
  const outcome: CardOutcome = testCard(paymentMethod)!.outcome;
  if (outcome.kind === "requires_authentication") {
    const intent = await insertPaymentIntent(tx, {
      ...base,
      status: "requires_action",
      paymentMethod,
      latestCharge: null,
      lastPaymentError: null,
      nextAction: {
        type: "redirect_to_url",
        redirect_to_url: {
          url: context.challengeUrl(id, clientSecret),
          return_url: params.returnUrl,
        },
      },
    });
    return jsonResponse(200, paymentIntentObject(intent));
  }
  const chargeId = newId("ch");
  if (outcome.kind === "succeeded") {
    const intent = await insertPaymentIntent(tx, {
      ...base,
      status: "succeeded",
      paymentMethod,
      latestCharge: chargeId,
      lastPaymentError: null,
    });
    await insertCharge(tx, {
      id: chargeId,
      account,
      paymentIntent: id,
      params,
      paymentMethod,
      outcome,
    });
    const shown = paymentIntentObject(intent);
    await recordEvent(tx, {
      account,
      type: "payment_intent.succeeded",
      object: shown,
      paymentIntent: id,
      origin,
    });
    return jsonResponse(200, shown);
  }

  const error: StripeError = {
    type: "card_error",
    code: outcome.code,
    ...(outcome.declineCode && { decline_code: outcome.declineCode }),
    ...(outcome.param && { param: outcome.param }),
    doc_url: docUrl(outcome.code),
    message: outcome.message,
    charge: chargeId,
    // Its id only: the whole object is drawn when shown (objects.ts).
    payment_method: { id: paymentMethod, object: "payment_method" },
  };
  // Like Stripe, the failed payment method is detached from the intent, which
  // waits for another one; the failure is kept as `last_payment_error`.
  const intent = await insertPaymentIntent(tx, {
    ...base,
    status: "requires_payment_method",
    paymentMethod: null,
    latestCharge: chargeId,
    lastPaymentError: error,
  });
  await insertCharge(tx, {
    id: chargeId,
    account,
    paymentIntent: id,
    params,
    paymentMethod,
    outcome,
  });
  // The error is the intent's last_payment_error, carrying the intent, as at Stripe.
  const shown = paymentIntentObject(intent);
  await recordEvent(tx, {
    account,
    type: "payment_intent.payment_failed",
    object: shown,
    paymentIntent: id,
    origin,
  });
  return errorResponse(402, { ...shown.last_payment_error!, payment_intent: shown });
}

async function insertPaymentIntent(
  tx: pg.PoolClient,
  intent: {
    id: string;
    clientSecret: string;
    account: string;
    params: CreatePaymentIntentParams;
    idempotencyKey: string | null;
    status: string;
    paymentMethod: string | null;
    latestCharge: string | null;
    lastPaymentError: StripeError | null;
    nextAction: NextAction | null;
  },
): Promise<PaymentIntentRow> {
  const { rows } = await tx.query<PaymentIntentRow>(
    `INSERT INTO payment_simulator.payment_intents
       (id, account, amount, currency, status, payment_method, payment_method_types, latest_charge,
        last_payment_error, client_secret, description, metadata, idempotency_key, automatic_payment_methods,
        return_url, next_action)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)
     RETURNING *`,
    [
      intent.id,
      intent.account,
      intent.params.amount,
      intent.params.currency,
      intent.status,
      intent.paymentMethod,
      intent.params.paymentMethodTypes,
      intent.latestCharge,
      intent.lastPaymentError && JSON.stringify(intent.lastPaymentError),
      intent.clientSecret,
      intent.params.description,
      JSON.stringify(intent.params.metadata),
      intent.idempotencyKey,
      intent.params.automaticPaymentMethods &&
        JSON.stringify(intent.params.automaticPaymentMethods),
      intent.params.returnUrl,
      intent.nextAction && JSON.stringify(intent.nextAction),
    ],
  );
  return rows[0]!;
}

export async function insertCharge(
  tx: pg.PoolClient,
  charge: {
    id: string;
    account: string;
    paymentIntent: string;
    params: Pick<CreatePaymentIntentParams, "amount" | "currency">;
    paymentMethod: string;
    outcome: CardOutcome;
  },
): Promise<void> {
  const failed = charge.outcome.kind === "failed" ? charge.outcome : undefined;
  await tx.query(
    `INSERT INTO payment_simulator.charges
       (id, account, payment_intent, amount, currency, status, payment_method, failure_code, decline_code, failure_message)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
    [
      charge.id,
      charge.account,
      charge.paymentIntent,
      charge.params.amount,
      charge.params.currency,
      failed ? "failed" : "succeeded",
      charge.paymentMethod,
      failed?.code ?? null,
      failed?.declineCode ?? null,
      failed?.message ?? null,
    ],
  );
}

/** One PaymentIntent's row, within the caller's account only. */
export async function findPaymentIntent(
  pool: pg.Pool,
  account: string,
  id: string,
): Promise<PaymentIntentRow | undefined> {
  const { rows } = await pool.query<PaymentIntentRow>(
    `SELECT * FROM payment_simulator.payment_intents WHERE account = $1 AND id = $2`,
    [account, id],
  );
  return rows[0];
}

/** One charge's row, within the caller's account only. */
export async function findCharge(
  pool: pg.Pool,
  account: string,
  id: string,
): Promise<ChargeRow | undefined> {
  const { rows } = await pool.query<ChargeRow>(
    `SELECT * FROM payment_simulator.charges WHERE account = $1 AND id = $2`,
    [account, id],
  );
  return rows[0];
}

export interface LedgerFilter {
  idempotencyKey?: string;
  /** Every key that starts with this: all of one merchant's customer's charges, say. */
  idempotencyKeyPrefix?: string;
  paymentIntent?: string;
}

// The admin view lists at most this many of each, newest first.
const LEDGER_LIMIT = 100;

/**
 * The admin view (GET /_simulator/ledger): payment intents, their charges
 * and their refunds, each with the account (SHA-256 of its first API key,
 * see auth.ts) it belongs to and (intents and refunds) the Idempotency-Key
 * it was created under, across all accounts. This is where a
 * test counts charges: "exactly one charge for this key", and refunds: "never
 * more given back than this intent took".
 */
export async function readLedger(pool: pg.Pool, filter: LedgerFilter) {
  const { rows: intents } = await pool.query<PaymentIntentRow>(
    `SELECT * FROM payment_simulator.payment_intents
      WHERE ($1::text IS NULL OR idempotency_key = $1) AND ($2::text IS NULL OR id = $2)
        AND ($4::text IS NULL OR starts_with(idempotency_key, $4))
      ORDER BY created DESC, id LIMIT $3`,
    [
      filter.idempotencyKey ?? null,
      filter.paymentIntent ?? null,
      LEDGER_LIMIT,
      filter.idempotencyKeyPrefix ?? null,
    ],
  );
  const filtered =
    filter.idempotencyKey !== undefined ||
    filter.paymentIntent !== undefined ||
    filter.idempotencyKeyPrefix !== undefined;
  const { rows: charges } = await pool.query<ChargeRow>(
    `SELECT * FROM payment_simulator.charges
      WHERE NOT $1 OR payment_intent = ANY($2::text[])
      ORDER BY created DESC, id LIMIT $3`,
    [filtered, intents.map((intent) => intent.id), LEDGER_LIMIT],
  );
  const refunds = await refundsOfIntents(
    pool,
    filtered ? intents.map((intent) => intent.id) : null,
    LEDGER_LIMIT,
  );
  return {
    object: "simulator.ledger",
    payment_intents: intents.map((row) => ({
      ...paymentIntentObject(row),
      account: row.account,
      idempotency_key: row.idempotency_key,
    })),
    charges: charges.map((row) => ({ ...chargeObject(row), account: row.account })),
    refunds: refunds.map((row) => ({
      ...refundObject(row),
      account: row.account,
      idempotency_key: row.idempotency_key,
    })),
  };
}
