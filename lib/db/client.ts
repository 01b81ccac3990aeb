import pg from "pg";
import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient } from "@/lib/generated/prisma/client";
import { serverEnv } from "@/lib/env";

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
      prisma: new PrismaClient({ adapter: new PrismaPg(pool) }),
    };
  }
  return globalForConnections.oncepayConnections;
}

/** The shared Prisma client, created on first use so `next build` never connects. */
export function db(): PrismaClient {
  return connections().prisma;
}

/** The pool under the Prisma client, for the hot path's plain SQL. */
export function sqlPool(): pg.Pool {
  return connections().pool;
}
