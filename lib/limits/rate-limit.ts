import type { Queryable } from "@/lib/db/sql";

/**
 * A fixed-window rate limit kept in PostgreSQL, so that every app instance
 * counts against the same window: one row per limited caller in the
 * unlogged `rate_limits` table, counted by one upsert that waits for no disk
 * flush (the table writes no WAL). The window's clock is the database's, so
 * instances with skewed clocks agree on when it ends.
 */
export type LimitDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number };

export interface RateLimit {
  /**
   * Counts `cost` points (one request, or the provider lookups one request
   * needs) for `caller`, all or none: refuses them when they do not all fit
   * in the window. Refused points count too, as a refused request does.
   */
  consume(caller: string, cost?: number): Promise<LimitDecision>;
  /**
   * The same limit, counted on a transaction's connection: the points
   * commit or roll back with what they were counted for.
   */
  within(transaction: Queryable): RateLimit;
}

export interface RateLimitOptions {
  /** Names this limit's windows in the shared table (`<name>:<caller>`). */
  name: string;
  /** Requests allowed per window; 0 switches the limit off. */
  points: number;
  windowSeconds: number;
}

const ALLOWED: LimitDecision = Object.freeze({ allowed: true });

// The window's end is kept in ms since the epoch (the column predates this module).
const NOW_MS = `(extract(epoch FROM statement_timestamp()) * 1000)::bigint`;

/**
 * More points in the caller's window: a new window when there is none or
 * the last one ended, else these points added to it. Concurrent requests of
 * one caller queue on its row's lock, so none of their points is lost.
 */
const COUNT = `INSERT INTO rate_limits AS window_row (key, points, expire)
  VALUES ($1, $3::int, ${NOW_MS} + $2::bigint)
  ON CONFLICT (key) DO UPDATE SET
    points = CASE WHEN coalesce(window_row.expire <= ${NOW_MS}, true) THEN $3::int ELSE window_row.points + $3::int END,
    expire = CASE WHEN coalesce(window_row.expire <= ${NOW_MS}, true) THEN EXCLUDED.expire ELSE window_row.expire END
  RETURNING points, (expire - ${NOW_MS})::int AS ms_left`;

export function postgresRateLimit(db: Queryable, options: RateLimitOptions): RateLimit {
  const { name, points, windowSeconds } = options;
  return {
    within: (transaction) => postgresRateLimit(transaction, options),
    async consume(caller, cost = 1) {
      if (points === 0 || cost === 0) return ALLOWED;
      const result = await db.query<{ points: number; ms_left: number }>(COUNT, [
        `${name}:${caller}`,
        windowSeconds * 1000,
        cost,
      ]);
      const { points: used, ms_left: msLeft } = result.rows[0]!;
      return used <= points
        ? ALLOWED
        : { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(msLeft / 1000)) };
    },
  };
}

/** Deletes windows that have ended, so callers seen once do not stay in the table. */
export async function deleteEndedWindows(db: Queryable): Promise<number> {
  const result = await db.query(`DELETE FROM rate_limits WHERE expire <= ${NOW_MS}`);
  return result.rowCount ?? 0;
}
