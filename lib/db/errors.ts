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
