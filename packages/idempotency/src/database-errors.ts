/**
 * Tells "the database could not be reached" apart from every other failure,
 * so the client gets 503 and Retry-After (retry later with the same key)
 * rather than a 500. Errors from `pg` carry a code; Prisma wraps them, so
 * the cause chain is walked.
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
  // A commit that may exist on the primary alone (replicated-commit.ts).
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
  // pg's, for a query on a client whose connection died while it was lent
  // out (a failover kills every connection at once): never reached the server.
  /is not queryable/i,
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
