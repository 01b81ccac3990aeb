import { askGated, rawSql, sql, type GatedQuery, type Queryable } from "@/lib/db/sql";

/**
 * A fixed-window rate limit kept in PostgreSQL, so that every app instance
 * counts against the same window: one row per limited caller in the
 * unlogged `rate_limits` table, counted by one upsert. The window's clock is
 * the database's, so instances with skewed clocks agree on when it ends.
 *
 * The count is SQL that can ride on another statement (`count`): the
 * checkout counts in the statement that claims its key, so the limit costs
 * it no round trip of its own, and only a request that claims is counted.
 * `consume` asks the same SQL by itself. Either way it is one statement that
 * waits for no disk flush (the table writes no WAL).
 */
export type LimitDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number };

export interface RateLimit {
  /** Counts one request by `caller`, as a statement of its own; refuses it once the window is full. */
  consume(caller: string): Promise<LimitDecision>;
  /** The same count, riding on another statement: it counts only when that statement's gate has its row. */
  count(caller: string): GatedQuery<LimitDecision>;
}

export interface RateLimitOptions {
  /** Names this limit's windows in the shared table (`<name>:<caller>`); lower-case letters and `_`. */
  name: string;
  /** Requests allowed per window; 0 switches the limit off. */
  points: number;
  windowSeconds: number;
}

const ALLOWED: LimitDecision = Object.freeze({ allowed: true });

// The window's end is kept in ms since the epoch (the column predates this module).
const NOW_MS = rawSql(`(extract(epoch FROM statement_timestamp()) * 1000)::bigint`);

export function postgresRateLimit(
  db: Queryable,
  { name, points, windowSeconds }: RateLimitOptions,
): RateLimit {
  if (!/^[a-z_]+$/.test(name))
    throw new Error(
      `A rate limit's name is part of an SQL name: "${name}" is not lower-case letters and _`,
    );
  const count = (caller: string): GatedQuery<LimitDecision> =>
    points === 0 ? NO_LIMIT : windowCount(name, caller, points, windowSeconds * 1000);
  return {
    consume: (caller) => askGated(db, count(caller)),
    count,
  };
}

const NO_LIMIT: GatedQuery<LimitDecision> = { answer: sql`NULL`, read: () => ALLOWED };

/**
 * One more request in the caller's window: a new window when there is none
 * or the last one ended, else one more point in it. Concurrent requests of
 * one caller queue on its row's lock, so none of their points is lost.
 */
function windowCount(
  name: string,
  caller: string,
  points: number,
  windowMs: number,
): GatedQuery<LimitDecision> {
  const cte = rawSql(`${name}_window`);
  return {
    ctes: (gate) => sql`${cte} AS (
        INSERT INTO rate_limits AS window_row (key, points, expire)
        SELECT ${`${name}:${caller}`}, 1, ${NOW_MS} + ${windowMs}::bigint FROM ${gate}
        ON CONFLICT (key) DO UPDATE SET
          points = CASE WHEN coalesce(window_row.expire <= ${NOW_MS}, true) THEN 1 ELSE window_row.points + 1 END,
          expire = CASE WHEN coalesce(window_row.expire <= ${NOW_MS}, true) THEN EXCLUDED.expire ELSE window_row.expire END
        RETURNING points, expire - ${NOW_MS} AS ms_left
      )`,
    answer: sql`(SELECT jsonb_build_object('points', points, 'msLeft', ms_left) FROM ${cte})`,
    read(answer) {
      if (answer === null) return ALLOWED; // the gate had no row: nothing was counted
      const { points: used, msLeft } = answer as { points: number; msLeft: number };
      return used <= points
        ? ALLOWED
        : { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(msLeft / 1000)) };
    },
  };
}

/** Deletes windows that have ended, so callers seen once do not stay in the table. */
export async function deleteEndedWindows(db: Queryable): Promise<number> {
  const result = await db.query(`DELETE FROM rate_limits WHERE expire <= ${NOW_MS.text}`);
  return result.rowCount ?? 0;
}
