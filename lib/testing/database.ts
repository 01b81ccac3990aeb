import { randomUUID } from "node:crypto";
import pg from "pg";
import { inject } from "vitest";
import { PrismaPg } from "@prisma/adapter-pg";
import { startEmbeddedDatabase } from "@/lib/db/embedded";
import { PrismaClient } from "@/lib/generated/prisma/client";
import { lazyPool, rowsIn } from "@/lib/testing/rows";

/**
 * The Vitest wiring of lib/testing/rows.ts: one pool on the database the
 * shared test app uses (from inject), made on first use. Direct database
 * access for assertions ("exactly one order row"), never for the behaviour
 * under test, which always goes through the app.
 */
const testPool = lazyPool(() => new pg.Pool({ connectionString: inject("databaseUrl"), max: 3 }));
let prisma: PrismaClient | undefined;

/** A Prisma client on the database under test, for driving lib/ code (the workers) directly. */
export function testPrisma(): PrismaClient {
  prisma ??= new PrismaClient({
    adapter: new PrismaPg({ connectionString: inject("databaseUrl"), max: 4 }),
  });
  return prisma;
}

export function testDb(): pg.Pool {
  return testPool.pool();
}

export async function closeTestDb(): Promise<void> {
  await testPool.close();
  await prisma?.$disconnect();
  prisma = undefined;
}

export const {
  countRows,
  tableCounts,
  rowCounts,
  keyRow,
  refundsOfOrder,
  keyRequestsOf,
  keyRequestRowsOfKeyId,
  expireLease,
  expireKey,
  loseKey,
  accountIdByTokenHash,
  idempotencyKeysOf,
  providerIntents,
  ordersForCart,
  rateLimitPoints,
  endRateLimitWindow,
} = rowsIn(testPool.db);

/**
 * An empty PostgreSQL database of its own on the server under test, for a
 * test that runs a whole deployment (the cluster), so that nothing it counts
 * (rows, rate-limit windows) is shared with the other tests. Real
 * PostgreSQL only.
 */
export async function createFreshPostgresDatabase(): Promise<{
  url: string;
  drop(): Promise<void>;
}> {
  const name = `oncepay_fresh_${randomUUID().replaceAll("-", "")}`;
  await testDb().query(`CREATE DATABASE ${name}`);
  const url = new URL(inject("databaseUrl"));
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => void (await testDb().query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)),
  };
}

/**
 * The URL of database `name` on the PostgreSQL server under test, as its
 * own user or as `user` (whether or not that database exists yet).
 */
export function serverUrlFor(name: string, { user }: { user?: string } = {}): string {
  const url = new URL(inject("databaseUrl"));
  url.pathname = `/${name}`;
  if (user !== undefined) {
    url.username = user;
    url.password = "";
  }
  return url.toString();
}

/**
 * A database name the server under test has never had, for a test that
 * starts something the way a fresh machine would: what it starts must
 * create it. `drop` removes it, if it was made, with its connections.
 * Real PostgreSQL only.
 */
export function unusedPostgresDatabase(stem = "oncepay_fresh"): {
  name: string;
  url: string;
  exists(): Promise<boolean>;
  drop(): Promise<void>;
} {
  const name = `${stem}_${randomUUID().replaceAll("-", "").slice(0, 12)}`;
  return {
    name,
    url: serverUrlFor(name),
    exists: async () =>
      (await testDb().query("SELECT 1 FROM pg_database WHERE datname = $1", [name])).rows.length ===
      1,
    drop: async () =>
      void (await testDb().query(
        `DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`,
      )),
  };
}

/**
 * A PostgreSQL URL from the docs, moved to the server under test (its
 * host, port, user and password: CI's need not be the docs' local
 * default) and naming `database`, with whatever options the docs gave.
 */
export function onServerUnderTest(documentedUrl: string, database: string): string {
  const server = new URL(serverUrlFor(database));
  const url = new URL(documentedUrl);
  for (const part of ["username", "password", "hostname", "port", "pathname"] as const)
    url[part] = server[part];
  return url.toString();
}

/**
 * An empty database of its own, for tests of migrations and schema: a new
 * database on the PostgreSQL server under test, or a new in-memory PGlite.
 */
export async function withFreshDatabase<T>(run: (url: string) => Promise<T>): Promise<T> {
  if (!inject("realPostgres")) {
    const embedded = await startEmbeddedDatabase(undefined, 5);
    try {
      return await run(embedded.url);
    } finally {
      await embedded.close();
    }
  }
  const name = `oncepay_fresh_${randomUUID().replaceAll("-", "")}`;
  const adminUrl = new URL(inject("databaseUrl"));
  await testDb().query(`CREATE DATABASE ${name}`);
  try {
    adminUrl.pathname = `/${name}`;
    return await run(adminUrl.toString());
  } finally {
    await testDb().query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  }
}
