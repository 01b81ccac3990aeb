import { createHash, randomUUID } from "node:crypto";
import type pg from "pg";
import type { ApiResponse } from "@/lib/payments/simulator/errors";
import { canonicalForm, type FormObject } from "@/lib/payments/simulator/form";

/**
 * Stripe's idempotency semantics for POST, kept in PostgreSQL the way OncePay
 * keeps its own (lib/idempotency/postgres-store.ts), in miniature and in the
 * same words (claim, fingerprint, in flight, lease, take over, replay,
 * complete, release):
 *
 *   - claim the key before anything is charged, atomically;
 *   - same key, same fingerprint, complete → replay the stored status and body, byte for byte;
 *   - same key, different fingerprint (parameters or endpoint) → 400 idempotency_error;
 *   - same key while its first request is in flight → 409 idempotency_error;
 *   - keys belong to one API key (`account`) and live 24 hours.
 *
 * A simulator request that dies between claim and charge leaves its key in
 * flight; its lease runs out after LEASE_SECONDS and the next request with
 * that key takes it over. That is safe because the charge and the stored
 * response commit in ONE transaction that first re-checks the lease (see
 * holdLease): an attempt that lost its lease can commit nothing. Unlike
 * OncePay's keys, these need no recovery points: nothing happens outside
 * that one transaction, so an in-flight key has never charged.
 *
 * The lease columns are still called lock_owner and locked_until: the
 * schema is created with CREATE TABLE IF NOT EXISTS and has no migrations,
 * so renaming them would break every simulator database already made.
 */
const KEY_TTL_SECONDS = 24 * 60 * 60;

// Longer than any injected latency (capped at 30 s in faults.ts), so a slow
// attempt that is alive is never taken over; short enough that a crashed
// simulator's keys become usable again within a client's retry budget.
const LEASE_SECONDS = 60;

// A key can vanish between our failed INSERT and our SELECT (released, or
// expired and deleted). Three passes without an answer means heavy churn on
// one key; the client is told the key is busy and retries.
const MAX_CLAIM_PASSES = 3;

export interface Claim {
  account: string;
  key: string;
  leaseOwner: string;
}

export type ClaimResult =
  | { kind: "claimed"; claim: Claim }
  | { kind: "replay"; stored: ApiResponse; originalRequest: string }
  | { kind: "in-flight" }
  | { kind: "fingerprint-mismatch" };

interface ExistingKeyRow {
  fingerprint: string;
  state: "in_flight" | "complete";
  expired: boolean;
  lease_expired: boolean;
  response_status: number | null;
  response_body: string | null;
  original_request: string;
}

/**
 * What makes two requests "the same" for a key: method, path and the
 * parameters with object keys sorted, so `amount=1&currency=usd` and
 * `currency=usd&amount=1` match while any changed value does not.
 */
export function fingerprintRequest(method: string, path: string, params: FormObject): string {
  return createHash("sha256")
    .update(`${method.toUpperCase()}\n${path}\n`)
    .update(canonicalForm(params))
    .digest("hex");
}

export async function claimKey(
  pool: pg.Pool,
  request: { account: string; key: string; fingerprint: string; requestId: string },
): Promise<ClaimResult> {
  for (let pass = 0; pass < MAX_CLAIM_PASSES; pass++) {
    const leaseOwner = randomUUID();
    // The claim. The primary key (account, idem_key) decides between
    // concurrent duplicates: exactly one INSERT gets a row back; every other
    // one waits for the winner's commit, gets nothing and reads its row.
    const inserted = await pool.query(
      `INSERT INTO payment_simulator.idempotency_keys
         (account, idem_key, fingerprint, state, lock_owner, locked_until, original_request, expires_at)
       VALUES ($1, $2, $3, 'in_flight', $4, now() + make_interval(secs => $5), $6, now() + make_interval(secs => $7))
       ON CONFLICT (account, idem_key) DO NOTHING
       RETURNING 1`,
      [
        request.account,
        request.key,
        request.fingerprint,
        leaseOwner,
        LEASE_SECONDS,
        request.requestId,
        KEY_TTL_SECONDS,
      ],
    );
    if (inserted.rowCount === 1)
      return { kind: "claimed", claim: { account: request.account, key: request.key, leaseOwner } };

    // A separate statement, not a CTE in the INSERT: a CTE reads the INSERT's
    // snapshot and can miss the row a concurrent winner just committed.
    const { rows } = await pool.query<ExistingKeyRow>(
      `SELECT fingerprint, state, expires_at <= now() AS expired, coalesce(locked_until <= now(), false) AS lease_expired,
              response_status, response_body, original_request
         FROM payment_simulator.idempotency_keys
        WHERE account = $1 AND idem_key = $2`,
      [request.account, request.key],
    );
    const existing = rows[0];
    if (!existing) continue;
    if (existing.expired) {
      // The condition is repeated so that a key renewed meanwhile survives.
      await pool.query(
        `DELETE FROM payment_simulator.idempotency_keys WHERE account = $1 AND idem_key = $2 AND expires_at <= now()`,
        [request.account, request.key],
      );
      continue;
    }
    if (existing.fingerprint !== request.fingerprint) return { kind: "fingerprint-mismatch" };
    if (existing.state === "complete") {
      return {
        kind: "replay",
        stored: { status: existing.response_status!, body: existing.response_body! },
        originalRequest: existing.original_request,
      };
    }
    if (!existing.lease_expired) return { kind: "in-flight" };

    // Its holder's lease ran out. Concurrent takeovers queue on the row lock and re-check
    // the WHERE clause on the newest version: exactly one of them wins.
    const takenOver = await pool.query(
      `UPDATE payment_simulator.idempotency_keys
          SET lock_owner = $3, locked_until = now() + make_interval(secs => $4), original_request = $5
        WHERE account = $1 AND idem_key = $2 AND state = 'in_flight' AND locked_until <= now()`,
      [request.account, request.key, leaseOwner, LEASE_SECONDS, request.requestId],
    );
    if (takenOver.rowCount === 1)
      return { kind: "claimed", claim: { account: request.account, key: request.key, leaseOwner } };
  }
  return { kind: "in-flight" };
}

/**
 * The first statement of the charge's transaction: locks the key row if this
 * attempt still holds its lease. Holding that row lock until COMMIT means no
 * takeover can slip in between this check and the stored response; false
 * means another attempt took the key over and this one must charge nothing.
 */
export async function holdLease(tx: pg.PoolClient, claim: Claim): Promise<boolean> {
  const { rowCount } = await tx.query(
    `SELECT 1 FROM payment_simulator.idempotency_keys
      WHERE account = $1 AND idem_key = $2 AND lock_owner = $3 AND state = 'in_flight'
      FOR UPDATE`,
    [claim.account, claim.key, claim.leaseOwner],
  );
  return rowCount === 1;
}

/** Marks the key complete with its response, in the same transaction as the charge it describes. */
export async function completeKey(
  tx: pg.PoolClient,
  claim: Claim,
  response: ApiResponse,
): Promise<void> {
  const { rowCount } = await tx.query(
    `UPDATE payment_simulator.idempotency_keys
        SET state = 'complete', response_status = $4, response_body = $5, lock_owner = NULL, locked_until = NULL
      WHERE account = $1 AND idem_key = $2 AND lock_owner = $3 AND state = 'in_flight'`,
    [claim.account, claim.key, claim.leaseOwner, response.status, response.body],
  );
  // holdLease locked the row, so this cannot miss; if it ever did, the throw
  // rolls the charge back with it.
  if (rowCount !== 1)
    throw new Error(`Idempotency key ${claim.key} is no longer held by this request`);
}

/**
 * Releases the key when the request failed before anything was charged
 * (its transaction rolled back), so a retry runs afresh instead of waiting
 * out the lease. Conditional on the lease owner: never deletes someone
 * else's claim.
 */
export async function releaseKey(pool: pg.Pool, claim: Claim): Promise<void> {
  await pool.query(
    `DELETE FROM payment_simulator.idempotency_keys WHERE account = $1 AND idem_key = $2 AND lock_owner = $3 AND state = 'in_flight'`,
    [claim.account, claim.key, claim.leaseOwner],
  );
}
