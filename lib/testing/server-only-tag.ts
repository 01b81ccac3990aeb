/**
 * The tag a server-only test's title carries (postgres-server-only.ts), and
 * how the run's summary reads the reason back (skip-summary-reporter.ts).
 * No Vitest import: the reporter runs in Vitest's main process, where the
 * test API is not available.
 */
export const serverOnlyTitle = (title: string, reason: string) =>
  `${title} [PostgreSQL server only: ${reason}]`;

export const SERVER_ONLY_TAG = /\s*\[PostgreSQL server only: ([^\]]+)\]/;
