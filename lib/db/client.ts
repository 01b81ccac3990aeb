import pg from "pg";
import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient } from "@/lib/generated/prisma/client";
import { serverEnv } from "@/lib/env";
import { statementModeOf, statementNamer } from "@/lib/db/statements";

export type Database = PrismaClient;

/**
 * One pool of connections, used two ways: Prisma (through its adapter) for
 * everything off the checkout's hot path, and plain SQL on the same pool for
 * the hot path itself (the idempotency store, the order writes, the rate
 * limit), where Prisma cost about 2.5× the time and 5× the CPU of the same
 * statements (bench/orm-share.mts). One pool, so the connection budget
 * (DATABASE_POOL_MAX) is one number, as the embedded database needs.
 */
interface Connections {
  pool: pg.Pool;
  prisma: PrismaClient;
}

// Cached on globalThis so that dev-mode hot reloads reuse one pool instead of
// leaving the old one holding every connection slot of the embedded database.
const globalForConnections = globalThis as typeof globalThis & { oncepayConnections?: Connections };

function connections(): Connections {
  if (!globalForConnections.oncepayConnections) {
    const env = serverEnv();
    const pool = new pg.Pool({ connectionString: env.DATABASE_URL, max: env.DATABASE_POOL_MAX });
    // An idle connection the server drops must not crash the process; the
    // next query gets a fresh connection.
    pool.on("error", () => undefined);
    globalForConnections.oncepayConnections = {
      pool,
      prisma: new PrismaClient({ adapter: prismaAdapter(pool, statementModeOf(env)) }),
    };
  }
  return globalForConnections.oncepayConnections;
}

/**
 * Prisma's adapter on the pool. Its statements are prepared, as the hot
 * path's are, unless the connection forbids it (a pooler in transaction
 * mode, the embedded database): the Prisma store's checkout took 1.7× the
 * SQL store's time with them, 2.1× without (measured one at a time; the
 * stores side by side: bench/orm-share.mts).
 */
export function prismaAdapter(pool: pg.Pool, mode: "prepared" | "unnamed"): PrismaPg {
  if (mode === "unnamed") return new PrismaPg(pool);
  const nameOf = statementNamer();
  return new PrismaPg(pool, { statementNameGenerator: (query) => nameOf(query.sql) ?? "" });
}

/** The shared Prisma client, created on first use so `next build` never connects. */
export function db(): PrismaClient {
  return connections().prisma;
}

/** The pool under the Prisma client, for the hot path's plain SQL. */
export function sqlPool(): pg.Pool {
  return connections().pool;
}
