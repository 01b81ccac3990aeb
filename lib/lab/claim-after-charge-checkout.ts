import { inTransaction } from "@/lib/db/transaction";
import {
  chargeOnce,
  labIdempotencyKey,
  labReplay,
  labResponse,
  recordLabOutcome,
  runLabCheckout,
  type LabServices,
} from "@/lib/lab/lab-checkout";

/**
 * BROKEN ON PURPOSE: the lab's "claim after the charge" strategy,
 * POST /api/lab/claim-after-charge-orders.
 *
 * It has what check-then-insert lacks, a unique constraint on (account, key)
 * and an atomic INSERT … ON CONFLICT DO NOTHING, but it claims the key only
 * after charging. The claim then decides which request writes the order,
 * too late to decide which one charges: every duplicate that arrived before
 * the first one finished has already taken the money. One order, several
 * charges, and the extra ones belong to no order at all.
 */
class ClaimLost extends Error {}

export async function createClaimAfterChargeOrder(
  request: Request,
  services: LabServices,
): Promise<Response> {
  return runLabCheckout(request, services, "claim_after_charge", async (checkout) => {
    const key = labIdempotencyKey(request);
    if (!key.ok) return key.response;
    const { db, accountId } = checkout;
    const stored = () =>
      db.labClaimAfterChargeKey.findUnique({
        where: { accountId_idemKey: { accountId, idemKey: key.key } },
      });

    // A completed key is replayed, as any such code would.
    const completed = await stored();
    if (completed) return labReplay(completed);

    // The charge, before the claim.
    const charged = await chargeOnce(checkout);
    await checkout.crashPoint("after-charge");

    try {
      const result = await inTransaction(checkout.pool, async (tx) => {
        const response = await recordLabOutcome(tx, checkout, charged, key.key);
        // The claim: one INSERT gets a row back; the others wait for it to
        // commit, get none, and roll their order back. Their charge stays.
        const claimed = await tx.query(
          `INSERT INTO lab_claim_after_charge_keys (account_id, idem_key, response_status, response_body)
           VALUES ($1, $2, $3, $4::jsonb)
           ON CONFLICT (account_id, idem_key) DO NOTHING
           RETURNING id`,
          [accountId, key.key, response.status, JSON.stringify(response.body)],
        );
        if (claimed.rowCount === 0) throw new ClaimLost();
        return response;
      });
      return labResponse(result);
    } catch (error) {
      if (!(error instanceof ClaimLost)) throw error;
      // Lost the claim after charging: answer with the winner's result, as if
      // this request had been a replay. The money this request took is not in it.
      const winner = await stored();
      if (!winner) throw new Error(`The key ${key.key} conflicted but has no row`);
      return labReplay(winner);
    }
  });
}
