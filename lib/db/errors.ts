/**
 * Tells "the database could not be reached" apart from every other failure,
 * so the client gets 503 + Retry-After (retry later with the same key) rather
 * than a 500. Driver errors arrive wrapped by Prisma; we walk the cause chain.
 */
const UNAVAILABLE_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "ENOTFOUND",
  "57P01", // admin_shutdown
  "57P02", // crash_shutdown
  "57P03", // cannot_connect_now
  "53300", // too_many_connections
  "08000", // connection_exception
  "08003", // connection_does_not_exist
  "08006", // connection_failure
  // A node that is no longer (or not yet) the primary: during a failover the
  // balancer may route to one for a moment before its checks catch up.
  "25006", // read_only_sql_transaction
  // A commit that may exist on the primary alone (lib/db/replicated-commit.ts).
  "ONCEPAY_UNREPLICATED_COMMIT",
  "P1001", // Prisma: can't reach database server
  "P1002", // Prisma: database server timed out
  "P1017", // Prisma: server closed the connection
  "P2024", // Prisma: timed out fetching a connection from the pool
]);

const UNAVAILABLE_MESSAGES = [
  /connection terminated/i,
  /server has closed the connection/i,
  /connection refused/i,
  /timeout exceeded when trying to connect/i,
  /can't reach database server/i,
  // PgBouncer's own: no server to lend (its PostgreSQL is failing over or gone).
  /query_wait_timeout/i,
  /server conn crashed/i,
  /server login has been failing/i,
];

export function isDatabaseUnavailable(error: unknown): boolean {
  for (let current = error, depth = 0; current && depth < 8; depth++) {
    if (typeof current !== "object") break;
    const { code, message, cause } = current as {
      code?: unknown;
      message?: unknown;
      cause?: unknown;
    };
    if (typeof code === "string" && UNAVAILABLE_CODES.has(code)) return true;
    if (
      typeof message === "string" &&
      UNAVAILABLE_MESSAGES.some((pattern) => pattern.test(message))
    )
      return true;
    current = cause;
  }
  return false;
}

/**
 * Whether the error is PostgreSQL refusing a row for the named unique
 * index, as `pg` reports it (code 23505, `constraint`) or as Prisma's
 * adapter wraps it (P2002, whose `meta.driverAdapterError.cause` carries the
 * original code and `constraint.index`).
 */
export function isUniqueViolation(error: unknown, indexName: string): boolean {
  for (let current = error, depth = 0; current && depth < 8; depth++) {
    if (typeof current !== "object") break;
    const found = current as {
      code?: unknown;
      originalCode?: unknown;
      constraint?: unknown;
      meta?: { driverAdapterError?: unknown };
      cause?: unknown;
    };
    if (found.code === "23505" && found.constraint === indexName) return true;
    const adapterConstraint = found.constraint as { index?: unknown } | undefined;
    if (found.originalCode === "23505" && adapterConstraint?.index === indexName) return true;
    current = found.meta?.driverAdapterError ?? found.cause;
  }
  return false;
}
