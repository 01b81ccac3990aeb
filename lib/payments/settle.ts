import type { Transaction } from "@/lib/db/transaction";

/**
 * Moves a pending payment (3-D Secure asked) to where the provider says it
 * ended, with its order, in the caller's transaction: succeeded makes the
 * order paid and writes its shipment; declined makes it failed. The payment's
 * row is locked first, and only a pending payment moves, so of any number of
 * settlers at once (the webhook, its duplicates, the recovery worker) one
 * moves it and the rest find it settled: `unchanged` when it ended as they
 * would have it, `stale` when it ended otherwise (an event older than the
 * state), `unknown` when no such payment is recorded.
 */
export type Settlement = { status: "succeeded" } | { status: "declined"; declineCode: string };

export type SettleResult = "paid" | "failed" | "unchanged" | "stale" | "unknown";

export type SettledBy = "webhook" | "recovery";

export async function settlePayment(
  tx: Transaction,
  payment: { provider: string; providerPaymentId: string },
  settlement: Settlement,
  settledBy: SettledBy,
): Promise<SettleResult> {
  const { rows } = await tx.query<{ id: string; status: string; order_id: string | null }>(
    `SELECT id, status, order_id FROM payments
      WHERE provider = $1 AND provider_payment_id = $2
        FOR UPDATE`,
    [payment.provider, payment.providerPaymentId],
  );
  const current = rows[0];
  if (!current) return "unknown";
  if (current.status !== "pending")
    return current.status === settlement.status ? "unchanged" : "stale";

  const paid = settlement.status === "succeeded";
  await tx.query(
    `UPDATE payments SET status = $2::payment_status, decline_code = $3, settled_by = $4, settled_at = now()
      WHERE id = $1`,
    [current.id, settlement.status, paid ? null : settlement.declineCode, settledBy],
  );
  if (current.order_id !== null) {
    await tx.query(
      `UPDATE orders SET status = $2::order_status WHERE id = $1 AND status = 'pending'`,
      [current.order_id, paid ? "paid" : "failed"],
    );
    // Fulfilment: the order ships once; the unique order_id is the database's word on it.
    if (paid)
      await tx.query(
        `INSERT INTO shipments (order_id) VALUES ($1) ON CONFLICT (order_id) DO NOTHING`,
        [current.order_id],
      );
  }
  return paid ? "paid" : "failed";
}
