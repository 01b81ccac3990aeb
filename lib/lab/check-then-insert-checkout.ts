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
 * BROKEN ON PURPOSE: the lab's "check, then insert" strategy,
 * POST /api/lab/check-then-insert-orders.
 *
 * The idempotency key as it is often first written: look the key up, and if
 * it is not there, do the work and then record the key with its response.
 * The key table (lab_check_then_insert_keys) has no unique constraint, as in
 * the code this copies. Under concurrency it fails in the window between the
 * check and the insert, and the charge sits right in that window: every
 * request that arrives before the first one has finished charging finds no
 * key, charges, and inserts its own key row and its own order.
 */
export async function createCheckThenInsertOrder(
  request: Request,
  services: LabServices,
): Promise<Response> {
  return runLabCheckout(request, services, "check_then_insert", async (checkout) => {
    const key = labIdempotencyKey(request);
    if (!key.ok) return key.response;
    const { db, accountId } = checkout;

    // The check.
    const seen = await db.labCheckThenInsertKey.findFirst({
      where: { accountId, idemKey: key.key },
      orderBy: { createdAt: "asc" },
    });
    if (seen) return labReplay(seen);

    // The window: until this request's INSERT commits, every duplicate passes the check above.
    const charged = await chargeOnce(checkout);
    await checkout.crashPoint("after-charge");

    // The insert, with the order. Nothing stops a second row for the same key.
    const result = await inTransaction(checkout.pool, async (tx) => {
      const response = await recordLabOutcome(tx, checkout, charged, key.key);
      await tx.query(
        `INSERT INTO lab_check_then_insert_keys (account_id, idem_key, response_status, response_body) VALUES ($1, $2, $3, $4::jsonb)`,
        [accountId, key.key, response.status, JSON.stringify(response.body)],
      );
      return response;
    });
    return labResponse(result);
  });
}
