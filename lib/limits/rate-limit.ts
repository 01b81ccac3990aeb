import { RateLimiterPostgres, RateLimiterRes } from "rate-limiter-flexible";
import type { PrismaClient } from "@/lib/generated/prisma/client";

/**
 * A fixed-window rate limit kept in PostgreSQL, so that every app instance
 * counts against the same window: rate-limiter-flexible's PostgreSQL store,
 * on the table its migration made (`rate_limits`, unlogged).
 *
 * Its SQL runs through the app's Prisma client rather than a pool of its
 * own, and that is not only for the connection count: the store names its
 * prepared statements, and a named statement lives in one server session,
 * which PgBouncer in transaction mode hands to another client after every
 * transaction (PgBouncer 1.18 does not carry them over). Through Prisma each
 * statement goes unnamed, parsed and run in one round trip, which any pooler
 * passes through. Each check is one statement, one round trip, one commit
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

export function postgresRateLimit(db: PrismaClient, { name, points, windowSeconds }: RateLimitOptions): RateLimit {
  if (points === 0) return { consume: async () => ({ allowed: true }) };
  const limiter = new RateLimiterPostgres({
    storeClient: unnamedStatementsThrough(db),
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
function unnamedStatementsThrough(db: PrismaClient) {
  return {
    async query({ text, values }: { text: string; values: unknown[] }) {
      const rows = await db.$queryRawUnsafe<Record<string, unknown>[]>(text, ...values);
      // Prisma reads BIGINT as bigint; the store does arithmetic with Date.now() on it.
      return { rows: rows.map((row) => Object.fromEntries(Object.entries(row).map(([column, value]) => [column, typeof value === "bigint" ? Number(value) : value]))) };
    },
  };
}
