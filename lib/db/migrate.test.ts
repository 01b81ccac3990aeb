import { createHash } from "node:crypto";
import { cp, mkdtemp, writeFile, appendFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { MIGRATIONS_DIR, migrate, readMigrations } from "@/lib/db/migrate";
import { closeTestDb, withFreshDatabase } from "@/lib/testing/database";
import { itOnServer } from "@/lib/testing/postgres-server-only";

afterAll(closeTestDb);

async function query<T extends pg.QueryResultRow>(url: string, sql: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql)).rows;
  } finally {
    await client.end();
  }
}

describe("migration runner", () => {
  it("applies every migration once and records it the way Prisma does", async () => {
    await withFreshDatabase(async (url) => {
      const first = await migrate(url);
      const second = await migrate(url);
      const files = await readMigrations();

      expect(first.applied).toEqual(files.map((file) => file.name));
      expect(second.applied).toEqual([]);
      const recorded = await query<{
        migration_name: string;
        checksum: string;
        finished_at: Date | null;
        applied_steps_count: number;
      }>(
        url,
        `SELECT migration_name, checksum, finished_at, applied_steps_count FROM "_prisma_migrations" ORDER BY migration_name`,
      );
      expect(recorded.map((row) => row.migration_name)).toEqual(files.map((file) => file.name));
      for (const [index, row] of recorded.entries()) {
        expect(row.checksum).toBe(createHash("sha256").update(files[index]!.sql).digest("hex"));
        expect(row.finished_at).toBeInstanceOf(Date);
        expect(row.applied_steps_count).toBe(1);
      }
    });
  });

  // PGlite runs a single session, so an advisory lock there cannot exclude
  // anyone: this race exists, and is tested, only on a real PostgreSQL.
  itOnServer(
    "sessions",
    "lets concurrent instances start together: the advisory lock applies each migration once",
    async () => {
      await withFreshDatabase(async (url) => {
        const reports = await Promise.all([migrate(url), migrate(url), migrate(url)]);
        const appliedNames = reports.flatMap((report) => report.applied);
        expect(appliedNames.sort()).toEqual(
          (await readMigrations()).map((file) => file.name).sort(),
        );
        const [row] = await query<{ count: string }>(
          url,
          `SELECT count(*) FROM "_prisma_migrations"`,
        );
        expect(Number(row?.count)).toBe(appliedNames.length);
      });
    },
  );

  it("rolls back a failing migration whole and records nothing for it", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "oncepay-migrations-"));
    await cp(MIGRATIONS_DIR, dir, { recursive: true });
    const broken = path.join(dir, "29991231000000_broken");
    await cp(path.join(MIGRATIONS_DIR, (await readMigrations())[0]!.name), broken, {
      recursive: true,
    });
    await writeFile(
      path.join(broken, "migration.sql"),
      `CREATE TABLE half_done (id int);\nSELECT * FROM no_such_table;\n`,
    );

    await withFreshDatabase(async (url) => {
      await expect(migrate(url, dir)).rejects.toThrow(/29991231000000_broken failed/);
      const tables = await query<{ table_name: string }>(
        url,
        `SELECT table_name FROM information_schema.tables WHERE table_name = 'half_done'`,
      );
      expect(tables).toEqual([]);
      const names = await query<{ migration_name: string }>(
        url,
        `SELECT migration_name FROM "_prisma_migrations"`,
      );
      expect(names.map((row) => row.migration_name)).not.toContain("29991231000000_broken");
    });
  });

  it("refuses to run when an applied migration was edited afterwards", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "oncepay-migrations-"));
    await cp(MIGRATIONS_DIR, dir, { recursive: true });
    await withFreshDatabase(async (url) => {
      await migrate(url, dir);
      const first = (await readMigrations(dir))[0]!;
      await appendFile(path.join(dir, first.name, "migration.sql"), "\n-- edited\n");
      await expect(migrate(url, dir)).rejects.toThrow(/modified after it was applied/);
    });
  });
});
