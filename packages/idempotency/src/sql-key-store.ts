import { randomUUID } from "node:crypto";
import type { JsonObject } from "./operation.js";
import {
  LeaseLostError,
  type AbandonedKey,
  type Claim,
  type ClaimRequest,
  type ClaimResult,
  type KeyMove,
  type KeyLifetime,
  type KeyStore,
  type KeyTimings,
} from "./store.js";
import { KEY_CHANGED_CHANNEL } from "./key-events.js";
import type { StoredResponse } from "./stored-response.js";

/**
 * The key store's statements, one per step, on whatever runs SQL: pgStore
 * gives it a `pg` pool, prismaStore a Prisma client. Each step is one
 * statement, so one round trip (a replay and a claim alike); an atomic
 * phase is its own writes and one more statement for the key, in one
 * transaction. Every time is the database's clock, so instances with skewed
 * clocks agree on when a lease or a key has run out.
 */
export interface SqlConnection<Tx> {
  /** Runs one statement with `$1…` parameters. */
  query<Row>(text: string, values: readonly unknown[]): Promise<Row[]>;
  /**
   * Runs `work` in one transaction: `tx` is the operation's, `query` runs
   * the key's statement inside it (a store may run that statement alone
   * when the operation wrote nothing: one statement is a transaction).
   */
  transaction<T>(work: (tx: Tx, query: SqlConnection<Tx>["query"]) => Promise<T>): Promise<T>;
  isUnavailable(error: unknown): boolean;
}

/**
 * When a key past its time to live may be deleted (by the reaper, or by a
 * claim that then starts it afresh): when it is complete, or when it never
 * reached a recovery point and nobody holds it, since then nothing but the
 * claim was written. A key that moved is never deleted while in flight,
 * however old: an effect may exist, and the recovery worker finishes it.
 */
export const DISPOSABLE_WHEN_EXPIRED = `(expires_at <= now()
  AND (state = 'complete' OR (point_reached_at IS NULL AND coalesce(lease_expires_at <= now(), true))))`;

/**
 * Lets the statement's transaction commit without waiting for its WAL to
 * reach the disk (SET LOCAL, inside the statement, so it ends with its
 * transaction, as a pooler in transaction mode needs). Only for writes whose
 * loss in a crash is harmless: a claim that only holds the key (lost,
 * nothing happened: the first phase's commit is durable and flushes it) and
 * a side effect's result (lost, the key is back at the side effect, which
 * asks again under the same key).
 */
const ASYNC_COMMIT = `set_config('synchronous_commit', 'off', true) = 'off'`;

// A key can vanish between a claim's failed INSERT and its read (released
// by a failed attempt, or expired and deleted). Each pass makes progress;
// three without an answer means heavy churn on one key, and the client is
// told to retry (409).
const MAX_CLAIM_PASSES = 3;

/**
 * The claim: reads the key's row and, when there is none, inserts it, in one
 * statement. `reaching` claims, given `$10` (the progress), insert the key
 * as having reached its first point, and commit durably, since a side effect
 * may follow at once; the others only hold the key, and commit without
 * waiting for the disk.
 */
const claimStatement = (reaching: boolean) => `WITH existing AS (
    SELECT id, fingerprint, expires_at, state = 'complete' AS complete, ${DISPOSABLE_WHEN_EXPIRED} AS disposable,
           coalesce(lease_expires_at <= now(), false) AS lease_expired,
           response_status, response_headers, response_body
      FROM idempotency_keys WHERE scope = $1 AND idem_key = $2
  ), claimed AS (
    INSERT INTO idempotency_keys (scope, idem_key, operation, fingerprint, request, recovery_point,
                                  lease_owner, lease_expires_at, expires_at,
                                  progress, point_reached_at, points_reached)
    SELECT $1, $2, $3, $4, $5::jsonb, $6::text, $7::uuid,
           now() + make_interval(secs => $8::int), now() + make_interval(secs => $9::int),
           ${reaching ? `$10::jsonb, now(), jsonb_build_object($6, now()::timestamptz(3))` : `'{}', NULL, '{}'`}
     WHERE NOT EXISTS (SELECT FROM existing)${reaching ? "" : ` AND ${ASYNC_COMMIT}`}
    ON CONFLICT (scope, idem_key) DO NOTHING
    RETURNING id, created_at, expires_at
  )
  SELECT (SELECT id::text FROM claimed) AS claimed_id, (SELECT created_at FROM claimed) AS created_at,
         (SELECT expires_at FROM claimed) AS expires_at,
         (SELECT to_jsonb(existing) FROM existing) AS existing`;

const CLAIM = claimStatement(false);
const CLAIM_REACHING = claimStatement(true);

const DELETE_IF_DISPOSABLE = `DELETE FROM idempotency_keys WHERE id = $1::uuid AND ${DISPOSABLE_WHEN_EXPIRED}`;

// Under READ COMMITTED, concurrent UPDATEs of one row queue on its lock and
// re-check the WHERE clause on the newest version: one of them wins.
const TAKE_OVER = `UPDATE idempotency_keys
    SET lease_owner = $1::uuid, lease_expires_at = now() + make_interval(secs => $2::int)
  WHERE id = $3::uuid AND state = 'in_flight' AND lease_expires_at <= now()
  RETURNING recovery_point, progress, point_reached_at, created_at, expires_at, side_effect_generation`;

const FIND_ABANDONED = `SELECT id::text AS "keyId", scope, idem_key AS key, operation, fingerprint, request
    FROM idempotency_keys
   WHERE state = 'in_flight' AND lease_expires_at <= now()
   ORDER BY lease_expires_at
   LIMIT $1::int`;

const HELD = `id = $1::uuid AND lease_owner = $2::uuid AND state = 'in_flight'`;

/**
 * Records the points in `$6` (a text array) as reached at `moved.at`: the
 * point a move goes to, and one a side effect's answer passed through
 * without a commit of its own.
 */
const POINTS_REACHED = `points_reached = points_reached ||
          (SELECT coalesce(jsonb_object_agg(point, moved.at), '{}') FROM unnest($6::text[]) AS point)`;

// clock_timestamp(), not now(): inside a phase's transaction now() is when
// it began, and the lease is renewed from the moment of the move. Read once
// (`moved.at`), so the point's records of its time agree.
const moveStatement = (durable: boolean) => `UPDATE idempotency_keys
    SET recovery_point = $3::text, progress = $4::jsonb, point_reached_at = moved.at,
        ${POINTS_REACHED},
        lease_expires_at = moved.at + make_interval(secs => $5::int)
   FROM (SELECT clock_timestamp()::timestamptz(3) AS at) AS moved
  WHERE ${HELD}${durable ? "" : ` AND ${ASYNC_COMMIT}`}
  RETURNING point_reached_at`;

/**
 * Tells the key's waiters, on every instance, that it changed, when a
 * request waits for it (`awaited`): the notification is sent when the
 * statement's transaction commits, and not at all when it rolls back
 * (keyTopic, key-events.ts). Only then, since PostgreSQL holds one lock on
 * its notification queue through the whole commit of a notifying
 * transaction: notifying every completion would serialise their commits.
 */
const NOTIFY_CHANGED = `CASE WHEN changed.awaited
    THEN pg_notify('${KEY_CHANGED_CHANNEL}', md5(changed.scope || chr(10) || changed.idem_key))::text
  END AS notified`;

/**
 * Marks an in-flight key as awaited, so that its next change notifies. No
 * row: it is in flight no longer (or gone), and the waiter claims again.
 * Under READ COMMITTED it waits for a commit holding the row, and then sees
 * the key complete: a change is either notified or seen, never missed.
 */
const MARK_AWAITED = `UPDATE idempotency_keys SET awaited = true
  WHERE scope = $1 AND idem_key = $2 AND state = 'in_flight'
  RETURNING 1 AS awaited`;

const COMPLETE = `WITH changed AS (
  UPDATE idempotency_keys
    SET state = 'complete', recovery_point = 'finished', response_status = $3::int,
        response_headers = $4::jsonb, response_body = $5::jsonb, completed_at = moved.at,
        ${POINTS_REACHED}, lease_owner = NULL, lease_expires_at = NULL
   FROM (SELECT clock_timestamp()::timestamptz(3) AS at) AS moved
  WHERE ${HELD}
  RETURNING id, scope, idem_key, awaited)
  SELECT id, ${NOTIFY_CHANGED} FROM changed`;

const NEXT_SIDE_EFFECT_KEY = `UPDATE idempotency_keys
    SET side_effect_generation = side_effect_generation + 1, point_reached_at = clock_timestamp(),
        lease_expires_at = clock_timestamp() + make_interval(secs => $3::int)
  WHERE ${HELD}
  RETURNING side_effect_generation, point_reached_at`;

// Truncated: the column keeps milliseconds and would round now() up, past
// the next statement's now(), and the lease would not yet look ended.
const END_LEASE = `WITH changed AS (
  UPDATE idempotency_keys SET lease_expires_at = date_trunc('milliseconds', now()) WHERE ${HELD}
  RETURNING scope, idem_key, awaited)
  SELECT ${NOTIFY_CHANGED} FROM changed`;

const RELEASE = `WITH changed AS (DELETE FROM idempotency_keys WHERE ${HELD} RETURNING scope, idem_key, awaited)
  SELECT ${NOTIFY_CHANGED} FROM changed`;

const STILL_HELD = `SELECT FROM idempotency_keys WHERE ${HELD}`;

// SKIP LOCKED: the reaper never waits on, nor blocks, an attempt that holds
// a key's row, and several instances reaping at once share the work.
const DELETE_EXPIRED = `WITH gone AS (
    DELETE FROM idempotency_keys
     WHERE id IN (SELECT id FROM idempotency_keys WHERE ${DISPOSABLE_WHEN_EXPIRED}
                   ORDER BY expires_at LIMIT $1::int FOR UPDATE SKIP LOCKED)
    RETURNING 1)
  SELECT count(*)::int AS deleted FROM gone`;

interface ExistingKeyRow {
  id: string;
  fingerprint: string;
  /** As JSON: an ISO 8601 string. */
  expires_at: string;
  complete: boolean;
  disposable: boolean;
  lease_expired: boolean;
  response_status: number | null;
  response_headers: Record<string, string> | null;
  response_body: unknown;
}

interface TakenOverRow {
  recovery_point: string;
  progress: unknown;
  point_reached_at: Date | string | null;
  created_at: Date | string;
  expires_at: Date | string;
  side_effect_generation: number;
}

export class SqlKeyStore<Tx> implements KeyStore<Tx> {
  constructor(
    private readonly connection: SqlConnection<Tx>,
    private readonly timings: KeyTimings,
  ) {}

  /**
   * The claim, the same rules in the same order whatever runs it: a new row
   * is ours; a disposable one is deleted and the key claimed afresh;
   * otherwise the row answers (another request under the key: 422;
   * complete: replay; a live lease: 409), and a lease that ran out is taken
   * over. The unique index on (scope, idem_key) is what tells concurrent
   * duplicates apart: exactly one INSERT gets a row back, every other gets
   * none (ON CONFLICT DO NOTHING waits for the winner to commit).
   */
  async claim(request: ClaimRequest): Promise<ClaimResult> {
    const { leaseSeconds, ttlSeconds } = this.timings;
    for (let pass = 0; pass < MAX_CLAIM_PASSES; pass++) {
      const leaseOwner = randomUUID();
      const values = [
        request.scope,
        request.key,
        request.operation,
        request.fingerprint,
        JSON.stringify(request.request ?? null),
        request.firstPoint,
        leaseOwner,
        leaseSeconds,
        ttlSeconds,
      ];
      const { progress } = request;
      const [row] = await this.connection.query<{
        claimed_id: string | null;
        created_at: Date | string | null;
        expires_at: Date | string | null;
        existing: ExistingKeyRow | null;
      }>(
        progress ? CLAIM_REACHING : CLAIM,
        progress ? [...values, JSON.stringify(progress)] : values,
      );
      if (row?.claimed_id) {
        const claim: Claim = {
          keyId: row.claimed_id,
          leaseOwner,
          point: request.firstPoint,
          progress: progress ?? {},
          moved: progress !== undefined,
          pointReachedAt: new Date(row.created_at!),
          sideEffectGeneration: 0,
          tookOver: false,
          lifetime: this.lifetime(row.expires_at!),
        };
        return { kind: "claimed", claim };
      }
      const existing = row?.existing;
      // No row at all: released, reaped, or committed after the read's snapshot. The next pass sees which.
      if (!existing) continue;
      if (existing.disposable) {
        await this.connection.query(DELETE_IF_DISPOSABLE, [existing.id]);
        continue;
      }
      const lifetime = this.lifetime(existing.expires_at);
      if (existing.fingerprint !== request.fingerprint)
        return { kind: "fingerprint-mismatch", lifetime };
      if (existing.complete)
        return { kind: "replay", stored: storedResponseOf(existing), lifetime };
      if (!existing.lease_expired) return { kind: "in-flight", lifetime };
      const takenOver = await this.takeOver(existing.id);
      if (takenOver) return { kind: "claimed", claim: takenOver };
    }
    return { kind: "in-flight" };
  }

  async takeOver(keyId: string): Promise<Claim | undefined> {
    const leaseOwner = randomUUID();
    const [row] = await this.connection.query<TakenOverRow>(TAKE_OVER, [
      leaseOwner,
      this.timings.leaseSeconds,
      keyId,
    ]);
    if (!row) return undefined;
    return {
      keyId,
      leaseOwner,
      point: row.recovery_point,
      progress: (row.progress ?? {}) as JsonObject,
      moved: row.point_reached_at !== null,
      pointReachedAt: new Date(row.point_reached_at ?? row.created_at),
      sideEffectGeneration: row.side_effect_generation,
      tookOver: true,
      lifetime: this.lifetime(row.expires_at),
    };
  }

  private lifetime(expiresAt: Date | string): KeyLifetime {
    return {
      expiresAt: new Date(expiresAt),
      retentionSeconds: this.timings.ttlSeconds,
      leaseSeconds: this.timings.leaseSeconds,
    };
  }

  async markAwaited(scope: string, key: string): Promise<boolean> {
    const rows = await this.connection.query(MARK_AWAITED, [scope, key]);
    return rows.length > 0;
  }

  async findAbandoned(limit: number): Promise<AbandonedKey[]> {
    return this.connection.query<AbandonedKey>(FIND_ABANDONED, [limit]);
  }

  async commitPhase(
    claim: Claim,
    phase: (tx: Tx) => Promise<KeyMove>,
    passing?: string,
  ): Promise<KeyMove> {
    const { move, reachedAt } = await this.connection
      .transaction(async (tx, query) => {
        const decided = await phase(tx);
        // Last, so the key's row is locked only for the commit; if another
        // attempt took it over meanwhile, this matches nothing and the throw
        // rolls back the phase's writes with it.
        const reached = await this.applyMove(query, claim, decided, { durable: true, passing });
        return { move: decided, reachedAt: reached };
      })
      .catch(async (error: unknown) => {
        throw (await this.lostMeanwhile(claim, error)) ? new LeaseLostError(claim.keyId) : error;
      });
    this.follow(claim, move, reachedAt);
    return move;
  }

  /**
   * Whether a phase failed because another attempt took the key over: its
   * writes can collide with the new holder's (a unique index) before its
   * move would have found the key gone, and that attempt is told the lease
   * was lost, as if the move had run. Asked only on failure.
   */
  private async lostMeanwhile(claim: Claim, error: unknown): Promise<boolean> {
    if (error instanceof LeaseLostError || this.connection.isUnavailable(error)) return false;
    const held = await this.connection
      .query(STILL_HELD, [claim.keyId, claim.leaseOwner])
      .catch(() => [undefined]);
    return held.length === 0;
  }

  async move(claim: Claim, move: KeyMove, { durable }: { durable: boolean }): Promise<void> {
    const reachedAt = await this.applyMove(
      this.connection.query.bind(this.connection),
      claim,
      move,
      { durable },
    );
    this.follow(claim, move, reachedAt);
  }

  /** The key's statement for a move; the time it reached its new point (none for a completion). */
  private async applyMove(
    query: SqlConnection<Tx>["query"],
    claim: Claim,
    move: KeyMove,
    { durable, passing }: { durable: boolean; passing?: string },
  ): Promise<Date | undefined> {
    const held = [claim.keyId, claim.leaseOwner];
    if ("response" in move) {
      const { status, headers, body } = move.response;
      const rows = await query(COMPLETE, [
        ...held,
        status,
        JSON.stringify(headers),
        JSON.stringify(body ?? null),
        passing ? [passing] : [],
      ]);
      if (rows.length !== 1) throw new LeaseLostError(claim.keyId);
      return undefined;
    }
    const [row] = await query<{ point_reached_at: Date | string }>(moveStatement(durable), [
      ...held,
      move.to,
      JSON.stringify(move.progress),
      this.timings.leaseSeconds,
      passing ? [passing, move.to] : [move.to],
    ]);
    if (!row) throw new LeaseLostError(claim.keyId);
    return new Date(row.point_reached_at);
  }

  /** Keeps the claim in step with the row it just moved. */
  private follow(claim: Claim, move: KeyMove, reachedAt: Date | undefined): void {
    if ("response" in move || reachedAt === undefined) return;
    claim.point = move.to;
    claim.progress = move.progress;
    claim.moved = true;
    claim.pointReachedAt = reachedAt;
  }

  async nextSideEffectKey(claim: Claim): Promise<void> {
    const [row] = await this.connection.query<{
      side_effect_generation: number;
      point_reached_at: Date | string;
    }>(NEXT_SIDE_EFFECT_KEY, [claim.keyId, claim.leaseOwner, this.timings.leaseSeconds]);
    if (!row) throw new LeaseLostError(claim.keyId);
    claim.sideEffectGeneration = row.side_effect_generation;
    claim.pointReachedAt = new Date(row.point_reached_at);
  }

  async endLease(claim: Claim): Promise<void> {
    await this.connection.query(END_LEASE, [claim.keyId, claim.leaseOwner]);
  }

  async release(claim: Claim): Promise<void> {
    await this.connection.query(RELEASE, [claim.keyId, claim.leaseOwner]);
  }

  async deleteExpired(limit: number): Promise<number> {
    const [row] = await this.connection.query<{ deleted: number }>(DELETE_EXPIRED, [limit]);
    return row?.deleted ?? 0;
  }

  isUnavailable(error: unknown): boolean {
    return this.connection.isUnavailable(error);
  }
}

function storedResponseOf(row: ExistingKeyRow): StoredResponse {
  return {
    status: row.response_status ?? 500,
    headers: row.response_headers ?? {},
    body: row.response_body,
  };
}
