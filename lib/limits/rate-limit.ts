import { RateLimiterPostgres, RateLimiterRes } from "rate-limiter-flexible";
import type pg from "pg";

/**
 * A fixed-window rate limit kept in PostgreSQL, so that every app instance
 * counts against the same window: rate-limiter-flexible's PostgreSQL store,
 * on the table its migration made (`rate_limits`, unlogged).
 *
 * Its SQL runs on the app's pool rather than a pool of its own, and
 * unnamed: the store names its prepared statements, and a named statement
 * lives in one server session, which PgBouncer in transaction mode hands to
 * another client after every transaction (PgBouncer 1.18 does not carry
 * them over). Unnamed, each statement is parsed and run in one round trip,
 * which any pooler passes through. Each check is one statement, one round trip, one commit
 * that waits for no disk flush (the table writes no WAL).
 */
export type LimitDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number };

export interface RateLimit {
  /** Counts one request by `caller`; refuses it once the window is full. */
  consume(caller: string): Promise<LimitDecision>;
}

export interface RateLimitOptions {
  /** Names this limit's windows in the shared table (`<name>:<caller>`). */
  name: string;
  /** Requests allowed per window; 0 switches the limit off. */
  points: number;
  windowSeconds: number;
}

export const RATE_LIMIT_TABLE = "rate_limits";

export function postgresRateLimit(pool: pg.Pool, { name, points, windowSeconds }: RateLimitOptions): RateLimit {
  if (points === 0) return { consume: async () => ({ allowed: true }) };
  const limiter = new RateLimiterPostgres({
    storeClient: unnamedStatementsOn(pool),
    storeType: "client",
    tableName: RATE_LIMIT_TABLE,
    tableCreated: true, // by the migration; the store would otherwise issue DDL on first use
    keyPrefix: name,
    points,
    duration: windowSeconds,
  });
  return {
    async consume(caller) {
      try {
        await limiter.consume(caller);
        return { allowed: true };
      } catch (refusal) {
        // The store rejects with its verdict when the window is full, and
        // with the database's error when it could not ask: that one is thrown
        // on, and answered as the database being unavailable.
        if (!(refusal instanceof RateLimiterRes)) throw refusal;
        return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(refusal.msBeforeNext / 1000)) };
      }
    },
  };
}

/** What the store calls a client: `query({ text, values })`; `name` is dropped, so no statement outlives its round trip. */
function unnamedStatementsOn(pool: pg.Pool) {
  return {
    query: ({ text, values }: { text: string; values: unknown[] }) => pool.query(text, values),
  };
}
