import { createHash, randomUUID } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import pg from "pg";

/**
 * Applies prisma/migrations the way `prisma migrate deploy` would, without
 * Prisma's native schema engine: pending folders in name order, each in its own
 * transaction, recorded in `_prisma_migrations` with Prisma's columns and
 * checksum (SHA-256 of the file) so Prisma's own tools agree on what ran.
 */

// Prisma's own advisory lock id, so this runner and `prisma migrate` exclude
// each other as well as concurrent instances of the app.
const MIGRATION_LOCK_ID = 72707369;

export const MIGRATIONS_DIR = path.join(process.cwd(), "prisma", "migrations");

export interface MigrationFile {
  name: string;
  sql: string;
  checksum: string;
}

export interface MigrationReport {
  applied: string[];
  alreadyApplied: number;
}

export async function readMigrations(dir = MIGRATIONS_DIR): Promise<MigrationFile[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const names = entries
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();
  return Promise.all(
    names.map(async (name) => {
      const sql = await readFile(path.join(dir, name, "migration.sql"), "utf8");
      return { name, sql, checksum: createHash("sha256").update(sql).digest("hex") };
    }),
  );
}

export async function migrate(
  connectionString: string,
  dir = MIGRATIONS_DIR,
): Promise<MigrationReport> {
  const migrations = await readMigrations(dir);
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    await client.query("SELECT pg_advisory_lock($1)", [MIGRATION_LOCK_ID]);
    try {
      return await applyPending(client, migrations);
    } finally {
      await client.query("SELECT pg_advisory_unlock($1)", [MIGRATION_LOCK_ID]);
    }
  } finally {
    await client.end();
  }
}

async function applyPending(
  client: pg.Client,
  migrations: MigrationFile[],
): Promise<MigrationReport> {
  await client.query(`
    CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
      "id"                  VARCHAR(36) PRIMARY KEY NOT NULL,
      "checksum"            VARCHAR(64) NOT NULL,
      "finished_at"         TIMESTAMPTZ,
      "migration_name"      VARCHAR(255) NOT NULL,
      "logs"                TEXT,
      "rolled_back_at"      TIMESTAMPTZ,
      "started_at"          TIMESTAMPTZ NOT NULL DEFAULT now(),
      "applied_steps_count" INTEGER NOT NULL DEFAULT 0
    )`);

  const { rows } = await client.query<{ migration_name: string; checksum: string }>(
    `SELECT migration_name, checksum FROM "_prisma_migrations"
      WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL`,
  );
  const appliedChecksums = new Map(rows.map((row) => [row.migration_name, row.checksum]));

  const applied: string[] = [];
  for (const migration of migrations) {
    const recorded = appliedChecksums.get(migration.name);
    if (recorded !== undefined) {
      // An applied migration that changed on disk means databases differ in
      // ways no later migration accounts for: stop rather than guess.
      if (recorded !== migration.checksum) {
        throw new Error(
          `Migration ${migration.name} was modified after it was applied (checksum differs). Add a new migration instead.`,
        );
      }
      continue;
    }
    await applyOne(client, migration);
    applied.push(migration.name);
  }
  return { applied, alreadyApplied: appliedChecksums.size };
}

async function applyOne(client: pg.Client, migration: MigrationFile): Promise<void> {
  await client.query("BEGIN");
  try {
    await client.query(migration.sql);
    await client.query(
      `INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at, finished_at, applied_steps_count)
       VALUES ($1, $2, $3, now(), now(), 1)`,
      [randomUUID(), migration.checksum, migration.name],
    );
    await client.query("COMMIT");
  } catch (error) {
    await client.query("ROLLBACK");
    throw new Error(`Migration ${migration.name} failed: ${(error as Error).message}`, {
      cause: error,
    });
  }
}
