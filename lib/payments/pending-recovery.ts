import type pg from "pg";
import { inTransaction } from "@/lib/db/transaction";
import { errorFields, log } from "@/lib/log";
import type { PaymentRecords } from "@/lib/payments/provider";
import { settlePayment, type SettleResult } from "@/lib/payments/settle";

/**
 * The recovery worker's part for payments that wait on the shopper's bank
 * (3-D Secure): when no event has settled one by the time it is
 * `olderThanSeconds` old (the shop's endpoint was down past the provider's
 * retries, say), ask the provider where it stands and settle it, exactly as
 * its event would have (settle.ts), so whatever arrives later changes
 * nothing. A payment still waiting for its shopper stays pending and is asked
 * about again next run, for a day; after that it is left to the ledger.
 */
export interface PendingRecoveryReport {
  asked: number;
  settled: number;
  /** Asked, and the provider could not say (unreachable, an odd state): asked again next run. */
  failed: number;
}

export async function settleStalePendingPayments(
  pool: pg.Pool,
  provider: Pick<PaymentRecords, "paymentOutcome"> & { name: string },
  options: { olderThanSeconds: number; batchSize: number },
): Promise<PendingRecoveryReport> {
  const { rows } = await pool.query<{ provider_payment_id: string }>(
    `SELECT provider_payment_id FROM payments
      WHERE status = 'pending' AND provider = $1
        AND created_at < now() - make_interval(secs => $2)
        AND created_at > now() - interval '1 day'
      ORDER BY created_at
      LIMIT $3`,
    [provider.name, options.olderThanSeconds, options.batchSize],
  );
  const report: PendingRecoveryReport = { asked: rows.length, settled: 0, failed: 0 };
  for (const { provider_payment_id: providerPaymentId } of rows) {
    let result: SettleResult | "waiting";
    try {
      const outcome = await provider.paymentOutcome(providerPaymentId);
      result =
        outcome.status === "requires_action"
          ? "waiting"
          : await inTransaction(pool, (tx) =>
              settlePayment(
                tx,
                { provider: provider.name, providerPaymentId },
                outcome.status === "succeeded"
                  ? { status: "succeeded" }
                  : { status: "declined", declineCode: outcome.declineCode },
                "recovery",
              ),
            );
    } catch (error) {
      report.failed += 1;
      log.warn("pending_payment.lookup_failed", { providerPaymentId, ...errorFields(error) });
      continue;
    }
    if (result === "paid" || result === "failed") {
      report.settled += 1;
      log.info("pending_payment.settled", { providerPaymentId, result });
    }
  }
  return report;
}
