import { describe, inject, it } from "vitest";
import { serverOnlyTitle } from "./server-only-tag";

/**
 * Tests that only mean something on a PostgreSQL server. The embedded
 * database (PGlite) serves every connection from one session and runs one
 * statement at a time: a race cannot happen there, an advisory lock excludes
 * nobody, and one connection's prepared statements are every connection's.
 * Such tests run when DATABASE_URL names a server (CI's second leg) and are
 * skipped on the embedded database, with the reason in their title; the
 * run's summary counts them by reason (skip-summary-reporter.ts).
 */
export const SERVER_ONLY_REASONS = {
  concurrency: "real concurrency (the embedded database runs one statement at a time)",
  sessions:
    "a session per connection (the embedded database serves every connection from one session)",
  pooler: "PgBouncer between the app and the server (it speaks to a PostgreSQL server)",
  crash: "a PostgreSQL server of its own to crash (initdb, pg_ctl)",
  replication: "PostgreSQL servers replicated by Patroni (it runs PostgreSQL itself)",
  databases:
    "databases and roles of its own made on the server (the embedded database is one database)",
} as const;

export type ServerOnlyReason = keyof typeof SERVER_ONLY_REASONS;

const onServer = inject("realPostgres");
const titled = (title: string, reason: ServerOnlyReason) =>
  serverOnlyTitle(title, SERVER_ONLY_REASONS[reason]);

/** `describe`, run only on a PostgreSQL server. */
export function describeOnServer(reason: ServerOnlyReason, title: string, body: () => void): void {
  describe.runIf(onServer)(titled(title, reason), body);
}

/** `it`, run only on a PostgreSQL server. */
export function itOnServer(
  reason: ServerOnlyReason,
  title: string,
  body: () => Promise<void>,
  timeout?: number,
): void {
  it.runIf(onServer)(titled(title, reason), body, timeout);
}
