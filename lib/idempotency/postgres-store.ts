import { randomUUID } from "node:crypto";
import { assertNever } from "@/lib/assert-never";
import type pg from "pg";
import {
  askGated,
  rawSql,
  sql,
  withClause,
  type GatedQuery,
  type GatedRows,
  type Queryable,
  type Sql,
} from "@/lib/db/sql";
import {
  LeaseLostError,
  type AbandonedKey,
  type Claim,
  type ClaimRequest,
  type ClaimResult,
  type IdempotencyStore,
  type KeyCompletion,
  type LookUpResult,
  type RecoveryPoint,
} from "@/lib/idempotency/store";
import type { StoredResponse } from "@/lib/idempotency/stored-response";

export interface KeyTimings {
  /** How long one attempt holds the key before another may take it over. */
  leaseSeconds: number;
  /** How long a key (and its stored response) lives. */
  ttlSeconds: number;
}

/**
 * When a key past its TTL may be deleted (by the reaper, or by a claim that
 * then starts the key afresh): when it is complete, or in flight at `claimed`
 * with its lease run out, since then nothing was charged and nobody holds it.
 * A key whose side effect began is never deleted while in flight, however
 * old: a fresh row would get a fresh provider key, and a second charge. The
 * recovery worker finishes such a key instead.
 */
export const DISPOSABLE_WHEN_EXPIRED = `(expires_at <= now()
  AND (state = 'complete' OR (recovery_point = 'claimed' AND coalesce(lease_expires_at <= now(), true))))`;

/**
 * Lets the statement's transaction commit without waiting for its WAL to
 * reach the disk (SET LOCAL synchronous_commit = off, inside the statement,
 * so it is one round trip and ends with its transaction, as a pooler in
 * transaction mode needs). Only for writes whose loss in a PostgreSQL crash
 * is harmless, which DESIGN.md argues write by write: the claim (lost, it
 * charged nothing: the provider is asked only after `payment_started`, a
 * durable commit, which flushes the claim's WAL with its own) and the
 * `charged` record (lost, the key is back at `payment_started`, and the
 * resume asks the provider again under the same provider key).
 */
const ASYNC_COMMIT = `set_config('synchronous_commit', 'off', true) = 'off'`;

const CLAIM_COLUMNS = rawSql(
  `(account_id, idem_key, request_method, request_path, fingerprint, request_body, lease_owner, lease_expires_at, expires_at)`,
);

/** What an existing key's row answers with (ExistingKeyRow). */
const EXISTING_KEY_COLUMNS = `id, fingerprint, state::text AS state,
  ${DISPOSABLE_WHEN_EXPIRED} AS disposable,
  coalesce(lease_expires_at <= now(), false) AS lease_expired,
  response_status, response_headers, response_body`;

/** The completion's CTE, and the gate the caller's rows select FROM. */
const COMPLETED_KEY = rawSql("completed_key");
/** The first look's claim, and the gate the question asked alongside it selects FROM. */
const CLAIMED = rawSql("claimed");

// A key can vanish between our failed INSERT and our SELECT (released by a
// failed attempt, or expired and deleted). Each pass through the loop makes
// progress; three passes without an answer means heavy churn on one key, and
// the client is told to retry.
const MAX_CLAIM_PASSES = 3;

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
 * The idempotency store on PostgreSQL, in plain SQL on a `pg` pool (its
 * statements prepared where the connection allows it): it is
 * the hot path, where Prisma cost about 2.5× the time of the same statements
 * (bench/orm-share.mts). All time comparisons use the database's clock, so
 * several app instances with skewed clocks agree on when a lease or a key
 * has expired.
 */
export class PostgresIdempotencyStore implements IdempotencyStore<GatedRows, GatedQuery<unknown>> {
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

  private async rowsOf<Row extends pg.QueryResultRow>(statement: Sql): Promise<Row[]> {
    return this.rows<Row>(statement.text, statement.values);
  }

  private async changed(text: string, values: unknown[]): Promise<number> {
    return (await this.db.query(text, values)).rowCount ?? 0;
  }

  async lookUpOrClaim(
    request: ClaimRequest,
    alongside?: GatedQuery<unknown>,
  ): Promise<LookUpResult> {
    const leaseOwner = randomUUID();
    // The INSERT runs only when the read found no row; if a concurrent claim
    // committed after this statement's snapshot, neither finds anything, and
    // claimKey's separate read sees it. The question asked alongside selects
    // FROM the claim, so only a request that claims asks it.
    const existing = sql`existing AS (
        SELECT ${rawSql(EXISTING_KEY_COLUMNS)} FROM idempotency_keys WHERE account_id = ${request.accountId}::uuid AND idem_key = ${request.key}
      )`;
    const claimed = sql`${CLAIMED} AS (
        INSERT INTO idempotency_keys ${CLAIM_COLUMNS}
        SELECT ${this.claimValues(request, leaseOwner)}
         WHERE NOT EXISTS (SELECT FROM existing) AND ${rawSql(ASYNC_COMMIT)}
        ON CONFLICT (account_id, idem_key) DO NOTHING
        RETURNING id
      )`;
    const rows = await this.rowsOf<{
      claimed_id: string | null;
      existing: ExistingKeyRow | null;
      answer: unknown;
    }>(
      sql`${withClause([existing, claimed, alongside?.ctes?.(CLAIMED)])}
       SELECT (SELECT id FROM ${CLAIMED}) AS claimed_id, (SELECT to_jsonb(existing) FROM existing) AS existing,
              ${alongside?.answer ?? sql`NULL`} AS answer`,
    );
    const { claimed_id: claimedId, existing: row, answer } = rows[0]!;
    if (claimedId)
      return {
        kind: "claimed",
        claim: { keyId: claimedId, leaseOwner, recoveryPoint: "claimed", tookOver: false },
        answer,
      };
    if (!row || row.disposable) return { kind: "claimable" };
    if (row.fingerprint !== request.fingerprint) return { kind: "fingerprint-mismatch" };
    if (row.state === "complete") return { kind: "replay", stored: storedResponseOf(row) };
    return row.lease_expired ? { kind: "claimable" } : { kind: "in-flight" };
  }

  async ask(question: GatedQuery<unknown>): Promise<unknown> {
    return askGated(this.db, { ...question, read: (answer) => answer });
  }

  async claimKey(request: ClaimRequest): Promise<ClaimResult> {
    for (let pass = 0; pass < MAX_CLAIM_PASSES; pass++) {
      const leaseOwner = randomUUID();
      const inserted = await this.insertClaim(request, leaseOwner);
      if (inserted)
        return {
          kind: "claimed",
          claim: { keyId: inserted, leaseOwner, recoveryPoint: "claimed", tookOver: false },
        };

      const existing = await this.readExisting(request);
      if (!existing) continue;
      if (existing.disposable) {
        await this.deleteExpired(existing.id);
        continue;
      }
      if (existing.fingerprint !== request.fingerprint) return { kind: "fingerprint-mismatch" };
      if (existing.state === "complete")
        return { kind: "replay", stored: storedResponseOf(existing) };
      if (!existing.lease_expired) return { kind: "in-flight" };

      const takenOver = await this.takeOverKey(existing.id);
      if (takenOver) return { kind: "claimed", claim: takenOver };
    }
    return { kind: "in-flight" };
  }

  /**
   * The claim. The unique index on (account_id, idem_key) makes this the one
   * place where concurrent duplicates are told apart: exactly one INSERT gets
   * a row back, every other gets none and goes on to read the winner's row.
   */
  private async insertClaim(
    request: ClaimRequest,
    leaseOwner: string,
  ): Promise<string | undefined> {
    const rows = await this.rowsOf<{ id: string }>(
      sql`INSERT INTO idempotency_keys ${CLAIM_COLUMNS}
       SELECT ${this.claimValues(request, leaseOwner)} WHERE ${rawSql(ASYNC_COMMIT)}
       ON CONFLICT (account_id, idem_key) DO NOTHING
       RETURNING id`,
    );
    return rows[0]?.id;
  }

  /** A claim's row, in CLAIM_COLUMNS' order: the request, its lease owner, and when the lease and the key expire. */
  private claimValues(request: ClaimRequest, leaseOwner: string): Sql {
    return sql`${request.accountId}::uuid, ${request.key}, ${request.method}, ${request.path}, ${request.fingerprint}, ${JSON.stringify(request.body)}::jsonb,
      ${leaseOwner}::uuid, now() + make_interval(secs => ${this.timings.leaseSeconds}), now() + make_interval(secs => ${this.timings.ttlSeconds})`;
  }

  // A separate statement, not a CTE folded into the INSERT: a CTE reads with
  // the INSERT's snapshot and can miss a duplicate committed in between.
  private async readExisting(request: ClaimRequest): Promise<ExistingKeyRow | undefined> {
    const rows = await this.rows<ExistingKeyRow>(
      `SELECT ${EXISTING_KEY_COLUMNS} FROM idempotency_keys WHERE account_id = $1::uuid AND idem_key = $2`,
      [request.accountId, request.key],
    );
    return rows[0];
  }

  private async deleteExpired(keyId: string): Promise<void> {
    // The condition is repeated so a key taken over or completed meanwhile is never deleted.
    await this.changed(
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
    const rows = await this.rows<{
      recovery_point: RecoveryPoint;
      side_effect_request: unknown;
      side_effect_result: unknown;
      payment_started_at: Date | null;
    }>(
      `UPDATE idempotency_keys
          SET lease_owner = $1::uuid,
              lease_expires_at = now() + make_interval(secs => $2)
        WHERE id = $3::uuid
          AND state = 'in_flight'
          AND lease_expires_at <= now()
       RETURNING recovery_point::text AS recovery_point, side_effect_request, side_effect_result, payment_started_at`,
      [leaseOwner, this.timings.leaseSeconds, keyId],
    );
    const row = rows[0];
    if (!row) return undefined;
    const taken = { keyId, leaseOwner, tookOver: true };
    // Keys whose payment began before the column existed have no start time.
    const startedAt =
      row.payment_started_at === null ? {} : { sideEffectStartedAt: row.payment_started_at };
    // What a resume needs from the row depends on how far the dead attempt got.
    switch (row.recovery_point) {
      case "claimed":
        return { ...taken, recoveryPoint: "claimed" };
      case "payment_started":
        return {
          ...taken,
          ...startedAt,
          recoveryPoint: "payment_started",
          sideEffectRequest: row.side_effect_request,
        };
      case "charged":
        return {
          ...taken,
          ...startedAt,
          recoveryPoint: "charged",
          sideEffectRequest: row.side_effect_request,
          sideEffectResult: row.side_effect_result,
        };
      case "finished":
        // completeKey sets `finished` and `complete` together, and the UPDATE matched only in-flight rows.
        throw new Error(`Idempotency key ${keyId} is in flight at recovery point finished`);
      default:
        return assertNever(row.recovery_point, "recovery point");
    }
  }

  async findAbandonedKeys(limit: number): Promise<AbandonedKey[]> {
    return this.rows<AbandonedKey>(
      `SELECT id AS "keyId", account_id AS "accountId", idem_key AS "idempotencyKey",
              request_method AS method, request_path AS path, request_body AS "requestBody"
         FROM idempotency_keys
        WHERE state = 'in_flight' AND lease_expires_at <= now()
        ORDER BY lease_expires_at
        LIMIT $1`,
      [limit],
    );
  }

  async markSideEffectStarted(claim: Claim, request: unknown): Promise<void> {
    const rows = await this.rows<{ payment_started_at: Date }>(
      `UPDATE idempotency_keys
          SET recovery_point = 'payment_started',
              side_effect_request = $1::jsonb,
              payment_started_at = now(),
              lease_expires_at = now() + make_interval(secs => $2)
        WHERE id = $3::uuid AND lease_owner = $4::uuid AND state = 'in_flight'
       RETURNING payment_started_at`,
      [JSON.stringify(request), this.timings.leaseSeconds, claim.keyId, claim.leaseOwner],
    );
    if (rows.length !== 1) throw new LeaseLostError(claim.keyId);
    claim.recoveryPoint = "payment_started";
    claim.sideEffectRequest = request;
    claim.sideEffectStartedAt = rows[0]!.payment_started_at;
  }

  async recordSideEffectResult(claim: Claim, result: unknown): Promise<void> {
    const updated = await this.changed(
      `UPDATE idempotency_keys SET recovery_point = 'charged', side_effect_result = $1::jsonb, charged_at = now()
        WHERE id = $2::uuid AND lease_owner = $3::uuid AND state = 'in_flight' AND ${ASYNC_COMMIT}`,
      [JSON.stringify(result), claim.keyId, claim.leaseOwner],
    );
    if (updated !== 1) throw new LeaseLostError(claim.keyId);
    claim.recoveryPoint = "charged";
    claim.sideEffectResult = result;
  }

  async endLease(claim: Claim): Promise<void> {
    await this.changed(
      `UPDATE idempotency_keys SET lease_expires_at = now()
        WHERE id = $1::uuid AND lease_owner = $2::uuid AND state = 'in_flight'`,
      [claim.keyId, claim.leaseOwner],
    );
  }

  /**
   * One statement, so one round trip and one commit: the key completes and
   * the caller's rows are written, each selecting FROM completed_key. If
   * another attempt took the key over, the UPDATE matches nothing, so
   * neither the key nor any of the rows is written.
   */
  async completeKey(claim: Claim, { response, rows }: KeyCompletion<GatedRows>): Promise<void> {
    const completedKey = sql`${COMPLETED_KEY} AS (
        UPDATE idempotency_keys
           SET state = 'complete', recovery_point = 'finished',
               response_status = ${response.status}::int, response_headers = ${JSON.stringify(response.headers)}::jsonb, response_body = ${JSON.stringify(response.body)}::jsonb,
               completed_at = clock_timestamp(), lease_owner = NULL, lease_expires_at = NULL
         WHERE id = ${claim.keyId}::uuid AND lease_owner = ${claim.leaseOwner}::uuid AND state = 'in_flight'
        RETURNING id
      )`;
    const result = await this.rowsOf<{ completed: number }>(
      sql`${withClause([completedKey, rows?.(COMPLETED_KEY)])}SELECT count(*)::int AS completed FROM ${COMPLETED_KEY}`,
    );
    if (result[0]?.completed !== 1) throw new LeaseLostError(claim.keyId);
  }

  async releaseKey(claim: Claim): Promise<void> {
    await this.changed(
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
