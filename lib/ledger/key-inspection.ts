import type { Database } from "@/lib/db/client";
import { keyRequestsOf } from "@/lib/ledger/key-requests";
import type { CommonKeyFields, KeyRow } from "@/lib/ledger/key-row";
import { inspectCheckoutKey } from "@/lib/ledger/key-inspection-checkout";
import { inspectRefundKey } from "@/lib/ledger/key-inspection-refund";
import type { ProviderReads } from "@/lib/ledger/provider-reads";
import { CHECKOUT } from "@/lib/orders/checkout";
import { REFUND } from "@/lib/refunds/refund";

export {
  keyInspectionSchema,
  type CheckoutKeyInspection,
  type KeyInspection,
  type RefundKeyInspection,
} from "@/lib/ledger/key-inspection-schema";
import type { KeyInspection } from "@/lib/ledger/key-inspection-schema";

/**
 * GET /api/keys/{key} and the key page: one of the account's keys, read
 * from its row, then described by its operation (the checkout's and the
 * refund's modules beside this one), each with its own recovery points,
 * rows and records at the provider.
 */

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
    SELECT id, idem_key, state, recovery_point, operation, request, created_at, points_reached,
           completed_at, lease_owner, lease_expires_at, lease_expires_at <= now() AS lease_expired,
           expires_at, fingerprint, side_effect_generation, response_status
      FROM idempotency_keys
     WHERE scope = ${accountId} AND idem_key = ${key}`;
  const row = rows[0];
  if (!row) return undefined;

  const common: CommonKeyFields = {
    object: "idempotency_key",
    key: row.idem_key,
    state: row.state,
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
    response: row.response_status === null ? null : { status: row.response_status },
    requests: await keyRequestsOf(db, row.id),
  };
  switch (row.operation) {
    case CHECKOUT:
      return inspectCheckoutKey(db, reads, accountId, row, common);
    case REFUND:
      return inspectRefundKey(db, reads, accountId, row, common);
    default:
      // The engine runs only these two operations (lib/idempotency/shop-engine.ts).
      throw new Error(`Key ${row.id} is of an operation the shop does not run: ${row.operation}`);
  }
}
