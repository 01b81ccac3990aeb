import type pg from "pg";
import type { Transaction } from "@/lib/db/transaction";
import {
  docUrl,
  errorResponse,
  invalidRequest,
  jsonResponse,
  type ApiResponse,
} from "@/lib/payments/simulator/errors";
import { recordEvent, type EventOrigin } from "@/lib/payments/simulator/events";
import { newId } from "@/lib/payments/simulator/ids";
import { money } from "@/lib/payments/simulator/money";
import type { ChargeRow } from "@/lib/payments/simulator/ledger";
import { chargeObject, refundObject } from "@/lib/payments/simulator/objects";
import type { CreateRefundParams } from "@/lib/payments/simulator/refund-params";

/**
 * The refunds in the ledger: money given back from a succeeded charge, at
 * most what it took, in as many refunds as the merchant likes. Every refund
 * of a charge first locks the charge's row (SELECT … FOR UPDATE) and only
 * then reads how much is left; so however many refunds of one charge are in
 * flight at once, under whichever keys, they take turns on that row, and
 * each sees what the ones before it left. The refund row and the charge's
 * running total are written in the caller's transaction, which also stores
 * the answer under the Idempotency-Key (idempotent-post.ts).
 */
export interface RefundRow {
  id: string;
  seq: string;
  account: string;
  payment_intent: string;
  charge: string;
  amount: string;
  currency: string;
  status: "succeeded";
  reason: string | null;
  payment_method: string | null;
  metadata: Record<string, string>;
  idempotency_key: string | null;
  created: string;
}

export interface RefundTarget {
  account: string;
  paymentIntent: string;
  /** The charge to refund: the one named, or the PaymentIntent's latest; null when it has none. */
  charge: string | null;
}

/**
 * POST /v1/refunds, once its parameters and target are known: a refund of
 * `params.amount` (or of all that is left), or Stripe's refusal, decided
 * against the charge while its row is locked. The refusals are answers of
 * the executed request, so (as at Stripe) they are stored under the key.
 */
export async function refundCharge(
  tx: Transaction,
  target: RefundTarget,
  params: CreateRefundParams,
  origin: EventOrigin,
): Promise<ApiResponse> {
  const idempotencyKey = origin.idempotencyKey;
  const { rows } = await tx.query<ChargeRow>(
    `SELECT * FROM payment_simulator.charges WHERE account = $1 AND id = $2 FOR UPDATE`,
    [target.account, target.charge],
  );
  const charge = rows[0];
  if (!charge || charge.status !== "succeeded") return noSuccessfulCharge(target.paymentIntent);

  const charged = Number(charge.amount);
  const left = charged - Number(charge.amount_refunded);
  if (left <= 0) return chargeAlreadyRefunded(charge.id);
  const amount = params.amount ?? left;
  if (amount > left) return amountTooLarge(amount, charged, left, charge.currency);

  const updated = await tx.query<ChargeRow>(
    `UPDATE payment_simulator.charges SET amount_refunded = amount_refunded + $2 WHERE id = $1 RETURNING *`,
    [charge.id, amount],
  );
  const inserted = await tx.query<RefundRow>(
    `INSERT INTO payment_simulator.refunds
       (id, account, payment_intent, charge, amount, currency, status, reason, payment_method, metadata, idempotency_key)
     VALUES ($1, $2, $3, $4, $5, $6, 'succeeded', $7, $8, $9, $10)
     RETURNING *`,
    [
      newId("re"),
      target.account,
      charge.payment_intent,
      charge.id,
      amount,
      charge.currency,
      params.reason,
      charge.payment_method,
      JSON.stringify(params.metadata),
      idempotencyKey,
    ],
  );
  // Stripe's charge.refunded carries the charge, showing what is refunded of it by now.
  await recordEvent(tx, {
    account: target.account,
    type: "charge.refunded",
    object: chargeObject(updated.rows[0]!),
    paymentIntent: charge.payment_intent,
    origin,
  });
  return jsonResponse(200, refundObject(inserted.rows[0]!));
}

// Stripe's wording for each refusal, as its API answers it.

/** A PaymentIntent (or charge) whose payment did not succeed: there is nothing to refund. */
export function noSuccessfulCharge(paymentIntent: string): ApiResponse {
  return invalidRequest(
    `This PaymentIntent (${paymentIntent}) does not have a successful charge to refund.`,
  );
}

function chargeAlreadyRefunded(charge: string): ApiResponse {
  return errorResponse(400, {
    type: "invalid_request_error",
    code: "charge_already_refunded",
    doc_url: docUrl("charge_already_refunded"),
    message: `Charge ${charge} has already been refunded.`,
  });
}

/** More than is left: Stripe names the charge's whole amount until part of it is refunded. */
function amountTooLarge(
  amount: number,
  charged: number,
  left: number,
  currency: string,
): ApiResponse {
  const against =
    left === charged
      ? `charge amount (${money(charged, currency)})`
      : `unrefunded amount on charge (${money(left, currency)})`;
  return invalidRequest(`Refund amount (${money(amount, currency)}) is greater than ${against}`, {
    param: "amount",
    code: "amount_too_large",
  });
}

/** One refund's row, within the caller's account only. */
export async function findRefund(
  pool: pg.Pool,
  account: string,
  id: string,
): Promise<RefundRow | undefined> {
  const { rows } = await pool.query<RefundRow>(
    `SELECT * FROM payment_simulator.refunds WHERE account = $1 AND id = $2`,
    [account, id],
  );
  return rows[0];
}

export interface RefundFilter {
  paymentIntent: string | null;
  charge: string | null;
  /** Only refunds older than this one (its seq): the page after it. */
  beforeSeq: string | null;
  limit: number;
}

/** An account's refunds, newest first (seq, schema.ts), at most `limit`. */
export async function listRefundRows(
  pool: pg.Pool,
  account: string,
  filter: RefundFilter,
): Promise<RefundRow[]> {
  const { rows } = await pool.query<RefundRow>(
    `SELECT * FROM payment_simulator.refunds
      WHERE account = $1 AND ($2::text IS NULL OR payment_intent = $2)
        AND ($3::text IS NULL OR charge = $3) AND ($4::bigint IS NULL OR seq < $4)
      ORDER BY seq DESC LIMIT $5`,
    [account, filter.paymentIntent, filter.charge, filter.beforeSeq, filter.limit],
  );
  return rows;
}

/** The refunds of these PaymentIntents, across accounts, newest first: the admin ledger's view. */
export async function refundsOfIntents(
  pool: pg.Pool,
  paymentIntents: string[] | null,
  limit: number,
): Promise<RefundRow[]> {
  const { rows } = await pool.query<RefundRow>(
    `SELECT * FROM payment_simulator.refunds
      WHERE $1::text[] IS NULL OR payment_intent = ANY($1::text[])
      ORDER BY seq DESC LIMIT $2`,
    [paymentIntents, limit],
  );
  return rows;
}
