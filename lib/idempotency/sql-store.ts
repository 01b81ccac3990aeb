import { randomUUID } from "node:crypto";
import type pg from "pg";
import { rawSql, run, sql, type Queryable } from "@/lib/db/sql";
import {
  claimKey,
  DISPOSABLE_WHEN_EXPIRED,
  takenOverClaim,
  type ClaimSteps,
  type ExistingKey,
  type KeyTimings,
  type TakenOverRow,
} from "@/lib/idempotency/key-rules";
import {
  completionError,
  LeaseLostError,
  type AbandonedKey,
  type Claim,
  type ClaimRequest,
  type ClaimResult,
  type IdempotencyStore,
  type KeyCompletion,
} from "@/lib/idempotency/store";
import type { StoredResponse } from "@oncepay/idempotency";
import { orderRowsSql } from "@/lib/orders/order-rows-sql";

/**
 * Lets the statement's transaction commit without waiting for its WAL to
 * reach the disk (SET LOCAL synchronous_commit = off, inside the statement,
 * so it is one round trip and ends with its transaction, as a pooler in
 * transaction mode needs). Only for writes whose loss in a PostgreSQL crash
 * is harmless, which docs/stores.md argues write by write: the claim (lost, it
 * charged nothing: the provider is asked only after `payment_started`, a
 * durable commit, which flushes the claim's WAL with its own) and the
 * `charged` record (lost, the key is back at `payment_started`, and the
 * resume asks the provider again under the same provider key).
 */
const ASYNC_COMMIT = `set_config('synchronous_commit', 'off', true) = 'off'`;

/** What an existing key's row answers with (ExistingKeyRow). */
const EXISTING_KEY_COLUMNS = `id, fingerprint, state::text AS state,
  ${DISPOSABLE_WHEN_EXPIRED} AS disposable,
  coalesce(lease_expires_at <= now(), false) AS lease_expired,
  response_status, response_headers, response_body`;

interface ExistingKeyRow {
  id: string;
  fingerprint: string;
  state: "in_flight" | "complete";
  /** Past its TTL and safe to delete (DISPOSABLE_WHEN_EXPIRED). */
  disposable: boolean;
  lease_expired: boolean;
  response_status: number | null;
  response_headers: Record<string, string> | null;
  response_body: unknown;
}

/**
 * The idempotency store in plain SQL on a `pg` pool, its statements prepared
 * where the connection allows it: one statement per step, so a replay and a
 * claim cost one round trip each, and the order commits with its key in the
 * statement that completes it. The one to copy when the checkout is your hot
 * path (docs/stores.md compares it with PrismaIdempotencyStore). All time
 * comparisons use the database's clock, so several app instances with skewed
 * clocks agree on when a lease or a key has expired.
 */
export class SqlIdempotencyStore implements IdempotencyStore, ClaimSteps {
  constructor(
    private readonly db: Queryable,
    private readonly timings: KeyTimings,
  ) {}

  private async rows<Row extends pg.QueryResultRow>(
    text: string,
    values: unknown[],
  ): Promise<Row[]> {
    return (await this.db.query<Row>(text, values)).rows;
  }

  async claimKey(request: ClaimRequest): Promise<ClaimResult> {
    return claimKey(this, request);
  }

  /**
   * The claim, in one round trip: reads the key's row and, when it has none,
   * inserts one. The read only saves a replay its second statement; the
   * unique index on (account_id, idem_key) is what tells concurrent
   * duplicates apart: exactly one INSERT gets a row back, and every other
   * gets none (ON CONFLICT DO NOTHING waits for the winner to commit).
   */
  async insertOrRead(
    request: ClaimRequest,
    leaseOwner: string,
  ): Promise<{ claimedId: string } | { claimedId: null; existing: ExistingKey | null }> {
    const { leaseSeconds, ttlSeconds } = this.timings;
    const [row] = await run<{ claimed_id: string | null; existing: ExistingKeyRow | null }>(
      this.db,
      sql`WITH existing AS (
          SELECT ${rawSql(EXISTING_KEY_COLUMNS)} FROM idempotency_keys
           WHERE account_id = ${request.accountId}::uuid AND idem_key = ${request.key}
        ), claimed AS (
          INSERT INTO idempotency_keys (account_id, idem_key, request_method, request_path, fingerprint, request_body,
                                        lease_owner, lease_expires_at, expires_at)
          SELECT ${request.accountId}::uuid, ${request.key}, ${request.method}, ${request.path}, ${request.fingerprint},
                 ${JSON.stringify(request.body)}::jsonb, ${leaseOwner}::uuid,
                 now() + make_interval(secs => ${leaseSeconds}), now() + make_interval(secs => ${ttlSeconds})
           WHERE NOT EXISTS (SELECT FROM existing) AND ${rawSql(ASYNC_COMMIT)}
          ON CONFLICT (account_id, idem_key) DO NOTHING
          RETURNING id
        )
        SELECT (SELECT id FROM claimed) AS claimed_id, (SELECT to_jsonb(existing) FROM existing) AS existing`,
    );
    const { claimed_id: claimedId, existing } = row!;
    if (claimedId) return { claimedId };
    return {
      claimedId: null,
      existing: existing && {
        id: existing.id,
        fingerprint: existing.fingerprint,
        complete: existing.state === "complete",
        disposable: existing.disposable,
        leaseExpired: existing.lease_expired,
        response: () => storedResponseOf(existing),
      },
    };
  }

  async deleteIfDisposable(keyId: string): Promise<void> {
    await this.db.query(
      `DELETE FROM idempotency_keys WHERE id = $1::uuid AND ${DISPOSABLE_WHEN_EXPIRED}`,
      [keyId],
    );
  }

  /**
   * Takes over a key whose holder's lease ran out (it crashed or stalled).
   * Under READ COMMITTED, concurrent UPDATEs of one row queue on its lock and
   * re-check the WHERE clause on the newest version, so exactly one of them
   * sees an expired lease: one winner.
   */
  async takeOverKey(keyId: string): Promise<Claim | undefined> {
    const leaseOwner = randomUUID();
    const rows = await this.rows<TakenOverRow>(
      `UPDATE idempotency_keys
          SET lease_owner = $1::uuid,
              lease_expires_at = now() + make_interval(secs => $2)
        WHERE id = $3::uuid
          AND state = 'in_flight'
          AND lease_expires_at <= now()
       RETURNING recovery_point::text AS recovery_point, payment_request, charge_result, payment_started_at,
                 provider_key_generation`,
      [leaseOwner, this.timings.leaseSeconds, keyId],
    );
    return rows[0] && takenOverClaim(keyId, leaseOwner, rows[0]);
  }

  async findAbandonedKeys(limit: number): Promise<AbandonedKey[]> {
    return this.rows<AbandonedKey>(
      `SELECT id AS "keyId", account_id AS "accountId", idem_key AS "idempotencyKey", fingerprint,
              request_method AS method, request_path AS path, request_body AS "requestBody"
         FROM idempotency_keys
        WHERE state = 'in_flight' AND lease_expires_at <= now()
        ORDER BY lease_expires_at
        LIMIT $1`,
      [limit],
    );
  }

  async markPaymentStarted(claim: Claim, paymentRequest: unknown): Promise<void> {
    const rows = await this.rows<{ payment_started_at: Date }>(
      `UPDATE idempotency_keys
          SET recovery_point = 'payment_started',
              payment_request = $1::jsonb,
              payment_started_at = now(),
              lease_expires_at = now() + make_interval(secs => $2)
        WHERE id = $3::uuid AND lease_owner = $4::uuid AND state = 'in_flight'
       RETURNING payment_started_at`,
      [JSON.stringify(paymentRequest), this.timings.leaseSeconds, claim.keyId, claim.leaseOwner],
    );
    if (rows.length !== 1) throw new LeaseLostError(claim.keyId);
    claim.recoveryPoint = "payment_started";
    claim.paymentRequest = paymentRequest;
    claim.paymentStartedAt = rows[0]!.payment_started_at;
  }

  async startNextProviderKey(claim: Claim): Promise<void> {
    const rows = await this.rows<{ provider_key_generation: number; payment_started_at: Date }>(
      `UPDATE idempotency_keys
          SET provider_key_generation = provider_key_generation + 1,
              payment_started_at = now(),
              lease_expires_at = now() + make_interval(secs => $1)
        WHERE id = $2::uuid AND lease_owner = $3::uuid AND state = 'in_flight'
       RETURNING provider_key_generation, payment_started_at`,
      [this.timings.leaseSeconds, claim.keyId, claim.leaseOwner],
    );
    if (rows.length !== 1) throw new LeaseLostError(claim.keyId);
    claim.providerKeyGeneration = rows[0]!.provider_key_generation;
    claim.paymentStartedAt = rows[0]!.payment_started_at;
  }

  async recordCharge(claim: Claim, chargeResult: unknown): Promise<void> {
    const result = await this.db.query(
      `UPDATE idempotency_keys SET recovery_point = 'charged', charge_result = $1::jsonb, charged_at = now()
        WHERE id = $2::uuid AND lease_owner = $3::uuid AND state = 'in_flight' AND ${ASYNC_COMMIT}`,
      [JSON.stringify(chargeResult), claim.keyId, claim.leaseOwner],
    );
    if (result.rowCount !== 1) throw new LeaseLostError(claim.keyId);
    claim.recoveryPoint = "charged";
    claim.chargeResult = chargeResult;
  }

  /**
   * One statement, so one round trip and one commit: the key completes and
   * the order's rows are written, each selecting FROM completed_key. If
   * another attempt took the key over, the UPDATE matches nothing, so
   * neither the key nor any of the rows is written.
   */
  async completeKey(claim: Claim, completion: KeyCompletion): Promise<void> {
    const { response, rows } = completion;
    const completedKey = rawSql("completed_key");
    const [result] = await run<{ completed: number }>(
      this.db,
      sql`WITH ${completedKey} AS (
          UPDATE idempotency_keys
             SET state = 'complete', recovery_point = 'finished',
                 response_status = ${response.status}::int, response_headers = ${JSON.stringify(response.headers)}::jsonb,
                 response_body = ${JSON.stringify(response.body)}::jsonb,
                 completed_at = clock_timestamp(), lease_owner = NULL, lease_expires_at = NULL
           WHERE id = ${claim.keyId}::uuid AND lease_owner = ${claim.leaseOwner}::uuid AND state = 'in_flight'
          RETURNING id
        )${rows ? sql`, ${orderRowsSql(rows, completedKey)}` : sql``}
        SELECT count(*)::int AS completed FROM ${completedKey}`,
    ).catch((error: unknown) => {
      throw completionError(error, completion);
    });
    if (result?.completed !== 1) throw new LeaseLostError(claim.keyId);
  }

  async endLease(claim: Claim): Promise<void> {
    await this.db.query(
      // Truncated: the column keeps milliseconds and would round now() up,
      // past the next statement's now(), and the lease would not yet look ended.
      `UPDATE idempotency_keys SET lease_expires_at = date_trunc('milliseconds', now())
        WHERE id = $1::uuid AND lease_owner = $2::uuid AND state = 'in_flight'`,
      [claim.keyId, claim.leaseOwner],
    );
  }

  async releaseKey(claim: Claim): Promise<void> {
    await this.db.query(
      `DELETE FROM idempotency_keys
        WHERE id = $1::uuid AND lease_owner = $2::uuid AND state = 'in_flight'`,
      [claim.keyId, claim.leaseOwner],
    );
  }
}

function storedResponseOf(row: ExistingKeyRow): StoredResponse {
  return {
    status: row.response_status ?? 500,
    headers: row.response_headers ?? {},
    body: row.response_body,
  };
}
