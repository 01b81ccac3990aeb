import { randomUUID } from "node:crypto";
import pg from "pg";
import { inject } from "vitest";
import { PrismaPg } from "@prisma/adapter-pg";
import { startEmbeddedDatabase } from "@/lib/db/embedded";
import { PrismaClient } from "@/lib/generated/prisma/client";

/**
 * Direct database access for assertions ("exactly one order row"), never for
 * the behaviour under test, which always goes through the app.
 */
let pool: pg.Pool | undefined;
let prisma: PrismaClient | undefined;

/** A Prisma client on the database under test, for driving lib/ code (the workers) directly. */
export function testPrisma(): PrismaClient {
  prisma ??= new PrismaClient({ adapter: new PrismaPg({ connectionString: inject("databaseUrl"), max: 4 }) });
  return prisma;
}

export function testDb(): pg.Pool {
  pool ??= new pg.Pool({ connectionString: inject("databaseUrl"), max: 3 });
  return pool;
}

export async function closeTestDb(): Promise<void> {
  await pool?.end();
  pool = undefined;
  await prisma?.$disconnect();
  prisma = undefined;
}

export async function countRows(table: "orders" | "payments" | "idempotency_keys", accountId: string): Promise<number> {
  const { rows } = await testDb().query<{ count: string }>(`SELECT count(*) FROM ${table} WHERE account_id = $1`, [accountId]);
  return Number(rows[0]!.count);
}

export interface KeyRow {
  id: string;
  state: string;
  recovery_point: string;
  fingerprint: string;
  response_status: number | null;
  response_body: unknown;
  side_effect_request: unknown;
  side_effect_result: unknown;
  lease_expires_at: Date | null;
}

export async function keyRow(accountId: string, key: string): Promise<KeyRow | undefined> {
  const { rows } = await testDb().query<KeyRow>(
    `SELECT id, state::text, recovery_point::text, fingerprint, response_status, response_body, side_effect_request, side_effect_result, lease_expires_at
       FROM idempotency_keys WHERE account_id = $1 AND idem_key = $2`,
    [accountId, key],
  );
  return rows[0];
}

/** Simulates the passing of time for one key: its lease (or its whole life) ran out. */
export async function expireLease(accountId: string, key: string): Promise<void> {
  await testDb().query(
    `UPDATE idempotency_keys SET lease_expires_at = now() - interval '1 second' WHERE account_id = $1 AND idem_key = $2`,
    [accountId, key],
  );
}

export async function expireKey(accountId: string, key: string): Promise<void> {
  await testDb().query(
    `UPDATE idempotency_keys SET expires_at = now() - interval '1 second' WHERE account_id = $1 AND idem_key = $2`,
    [accountId, key],
  );
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
