import { timingSafeEqual } from "node:crypto";
import type pg from "pg";
import { inTransaction } from "@/lib/db/transaction";
import { docUrl, type StripeError } from "@/lib/payments/simulator/errors";
import { NO_API_REQUEST, recordEvent } from "@/lib/payments/simulator/events";
import { newId } from "@/lib/payments/simulator/ids";
import { insertCharge, type PaymentIntentRow } from "@/lib/payments/simulator/ledger";
import { paymentIntentObject } from "@/lib/payments/simulator/objects";

/**
 * 3-D Secure, settled: what the bank's challenge page (challenge-page.ts)
 * does when the shopper completes or fails it. An intent waiting in
 * `requires_action` is locked, then either charged (its charge, the intent
 * `succeeded`, the event `payment_intent.succeeded`) or failed (back to
 * `requires_payment_method` with Stripe's `payment_intent_authentication_failure`,
 * the event `payment_intent.payment_failed`), all in one transaction. An
 * intent already settled is left as it is, so a second click, a reload or
 * any number of submissions at once settle it once.
 */
export type Authentication = "complete" | "fail";

export type Settled =
  { found: false } | { found: true; intent: PaymentIntentRow; changed: boolean };

/** Stripe's error for a failed authentication, kept as the intent's last_payment_error. */
function authenticationFailure(paymentMethod: string): StripeError {
  return {
    type: "invalid_request_error",
    code: "payment_intent_authentication_failure",
    doc_url: docUrl("payment_intent_authentication_failure"),
    message:
      "The provided PaymentMethod has failed authentication. You can provide payment_method_data or a new PaymentMethod to attempt to fulfill this PaymentIntent again.",
    payment_method: { id: paymentMethod, object: "payment_method" },
  };
}

/** The intent, if `clientSecret` is its own: the page's only credential, as Stripe's client secret is. */
export async function intentForChallenge(
  db: pg.Pool | pg.PoolClient,
  paymentIntent: string,
  clientSecret: string,
  lock = false,
): Promise<PaymentIntentRow | undefined> {
  const { rows } = await db.query<PaymentIntentRow>(
    `SELECT * FROM payment_simulator.payment_intents WHERE id = $1${lock ? " FOR UPDATE" : ""}`,
    [paymentIntent],
  );
  const intent = rows[0];
  return intent && sameSecret(intent.client_secret, clientSecret) ? intent : undefined;
}

export async function settleAuthentication(
  pool: pg.Pool,
  paymentIntent: string,
  clientSecret: string,
  authentication: Authentication,
): Promise<Settled> {
  return inTransaction(pool, async (tx) => {
    const intent = await intentForChallenge(tx, paymentIntent, clientSecret, true);
    if (!intent) return { found: false };
    if (intent.status !== "requires_action" || !intent.payment_method)
      return { found: true, intent, changed: false };
    const paymentMethod = intent.payment_method;
    let settled: PaymentIntentRow;
    if (authentication === "complete") {
      const chargeId = newId("ch");
      await insertCharge(tx, {
        id: chargeId,
        account: intent.account,
        paymentIntent: intent.id,
        params: { amount: Number(intent.amount), currency: intent.currency },
        paymentMethod,
        outcome: { kind: "succeeded" },
      });
      settled = await update(tx, intent.id, "succeeded", paymentMethod, chargeId, null);
    } else {
      // As after a decline, the payment method is detached and the intent waits for another.
      settled = await update(
        tx,
        intent.id,
        "requires_payment_method",
        null,
        null,
        authenticationFailure(paymentMethod),
      );
    }
    await recordEvent(tx, {
      account: intent.account,
      type:
        authentication === "complete"
          ? "payment_intent.succeeded"
          : "payment_intent.payment_failed",
      object: paymentIntentObject(settled),
      paymentIntent: intent.id,
      origin: NO_API_REQUEST,
    });
    return { found: true, intent: settled, changed: true };
  });
}

async function update(
  tx: pg.PoolClient,
  id: string,
  status: "succeeded" | "requires_payment_method",
  paymentMethod: string | null,
  latestCharge: string | null,
  lastPaymentError: StripeError | null,
): Promise<PaymentIntentRow> {
  const { rows } = await tx.query<PaymentIntentRow>(
    `UPDATE payment_simulator.payment_intents
        SET status = $2, payment_method = $3, latest_charge = $4, last_payment_error = $5, next_action = NULL
      WHERE id = $1
      RETURNING *`,
    [id, status, paymentMethod, latestCharge, lastPaymentError && JSON.stringify(lastPaymentError)],
  );
  return rows[0]!;
}

function sameSecret(stored: string, given: string): boolean {
  const a = Buffer.from(stored);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}
