import type pg from "pg";
import { inTransaction } from "@/lib/db/transaction";
import type { ProviderEvent } from "@/lib/webhooks/stripe-event";

/**
 * The webhook handler most integrations start with, for the lab to storm:
 * the signature is checked (by the same endpoint code as OncePay's), then
 * each delivery does what its event says, in a transaction of its own. It
 * keeps no record of the events it has acted on and does not ask whether
 * the payment has moved on, so a duplicate ships again and an older event
 * delivered late undoes a newer one. It ships into lab_shipments, which,
 * like the handler, has nothing to refuse a second shipment.
 */
export type NaiveOutcome = "paid" | "failed" | "not_ours" | "ignored";

export async function receiveWithoutRecord(
  pool: pg.Pool,
  provider: string,
  event: ProviderEvent,
): Promise<NaiveOutcome> {
  if (event.kind !== "payment") return "ignored";
  return inTransaction(pool, async (tx) => {
    const { rows } = await tx.query<{ id: string; order_id: string | null }>(
      `SELECT id, order_id FROM payments WHERE provider = $1 AND provider_payment_id = $2`,
      [provider, event.paymentIntentId],
    );
    const payment = rows[0];
    if (!payment || payment.order_id === null) return "not_ours";
    const paid = event.settlement.status === "succeeded";
    await tx.query(
      `UPDATE payments SET status = $2::payment_status, decline_code = $3, settled_by = 'webhook', settled_at = now()
        WHERE id = $1`,
      [
        payment.id,
        event.settlement.status,
        event.settlement.status === "declined" ? event.settlement.declineCode : null,
      ],
    );
    await tx.query(`UPDATE orders SET status = $2::order_status WHERE id = $1`, [
      payment.order_id,
      paid ? "paid" : "failed",
    ]);
    if (paid)
      await tx.query(`INSERT INTO lab_shipments (order_id) VALUES ($1)`, [payment.order_id]);
    return paid ? "paid" : "failed";
  });
}
