import type pg from "pg";
import { inTransaction, type Transaction } from "@/lib/db/transaction";
import { injectFault, type FaultName } from "@/lib/faults";
import { settlePayment, type SettleResult } from "@/lib/payments/settle";
import { logDelivery, paymentIntentOf } from "@/lib/webhooks/delivery-log";
import type { ProviderEvent } from "@/lib/webhooks/stripe-event";

/**
 * Acts on one verified event exactly once: its id is recorded in the same
 * transaction as the change it causes, so
 *
 *   - a duplicate (a retry, a redelivery, 50 copies at once) finds the id,
 *     waits for the first copy's commit if it is still running, and changes
 *     nothing: `duplicate`;
 *   - an event whose change is already made, by the payment's own answer or
 *     an earlier event, changes nothing: `unchanged`; one older than the
 *     state it would change (a failure after a success): `stale`;
 *   - an event about one of the shop's payments that is not recorded yet
 *     (the checkout's commit is still on its way) records nothing and is
 *     refused, so the provider delivers it again: PaymentNotRecordedYet.
 */
export type EventOutcome =
  Exclude<SettleResult, "unknown"> | "duplicate" | "noted" | "not_ours" | "ignored";

export class PaymentNotRecordedYet extends Error {
  constructor(readonly paymentIntentId: string) {
    super(`Payment ${paymentIntentId} is not recorded yet`);
  }
}

export async function receiveEvent(
  pool: pg.Pool,
  provider: string,
  event: ProviderEvent,
  /** A failure this delivery asked for (tests and demos only): the crash matrix's points. */
  fault?: FaultName,
): Promise<EventOutcome> {
  return inTransaction(pool, async (tx) => {
    // The gate: of any number of copies, one inserts; the rest wait for its commit, then find it.
    const { rowCount } = await tx.query(
      `INSERT INTO webhook_events (event_id, type, provider, provider_payment_id, outcome)
       VALUES ($1, $2, $3, $4, 'received')
       ON CONFLICT (event_id) DO NOTHING`,
      [event.id, event.type, provider, paymentIntentOf(event)],
    );
    if (rowCount === 0) {
      await logDelivery(tx, event, "duplicate");
      return "duplicate";
    }
    const outcome = await act(tx, provider, event);
    await tx.query(`UPDATE webhook_events SET outcome = $2 WHERE event_id = $1`, [
      event.id,
      outcome,
    ]);
    await logDelivery(tx, event, outcome);
    // The change is made and not committed: a crash here rolls it back with the event's id.
    injectFault(fault, "before-commit");
    return outcome;
  });
}

async function act(
  tx: Transaction,
  provider: string,
  event: ProviderEvent,
): Promise<Exclude<EventOutcome, "duplicate">> {
  switch (event.kind) {
    case "payment": {
      const result = await settlePayment(
        tx,
        { provider, providerPaymentId: event.paymentIntentId },
        event.settlement,
        "webhook",
      );
      if (result !== "unknown") return result;
      // Throwing rolls the event's record back with it: the next delivery acts afresh.
      if (event.ours) throw new PaymentNotRecordedYet(event.paymentIntentId);
      return "not_ours";
    }
    case "refund": {
      if (event.paymentIntentId === null) return "not_ours";
      const { rowCount } = await tx.query(
        `SELECT FROM payments WHERE provider = $1 AND provider_payment_id = $2`,
        [provider, event.paymentIntentId],
      );
      return rowCount === 0 ? "not_ours" : "noted";
    }
    case "other":
      return "ignored";
  }
}
