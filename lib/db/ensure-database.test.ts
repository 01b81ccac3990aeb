import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { promisify } from "node:util";
import pg from "pg";
import { afterAll, afterEach, expect, it } from "vitest";
import { DatabaseSetupError } from "@/lib/db/database-setup-error";
import { ensureDatabase, type EnsuredDatabase } from "@/lib/db/ensure-database";
import { freePort } from "@/lib/process/free-port";
import { waitUntil } from "@/lib/process/process-group";
import { closeTestDb, serverUrlFor, testDb } from "@/lib/testing/database";
import { describeOnServer } from "@/lib/testing/postgres-server-only";

/**
 * A fresh PostgreSQL server has no database named `oncepay`: start-up makes
 * the one DATABASE_URL names, once, however many start together, and says
 * in one line what to run when it may not.
 */
const made: string[] = [];
const roles: string[] = [];

/** A database name nobody has made yet (recorded, so it is dropped after). */
function unusedName(stem = "oncepay_ensure"): string {
  const name = `${stem}_${randomBytes(6).toString("hex")}`;
  made.push(name);
  return name;
}

async function exists(name: string): Promise<boolean> {
  const { rows } = await testDb().query("SELECT 1 FROM pg_database WHERE datname = $1", [name]);
  return rows.length === 1;
}

/** Sessions waiting on a lock in `CREATE DATABASE "<name>"`. */
async function createsWaitingFor(name: string): Promise<number> {
  const { rows } = await testDb().query<{ waiting: number }>(
    `SELECT count(*)::int AS waiting FROM pg_stat_activity
      WHERE wait_event_type = 'Lock' AND query = $1`,
    [`CREATE DATABASE ${pg.escapeIdentifier(name)}`],
  );
  return rows[0]!.waiting;
}

describeOnServer("databases", "ensureDatabase on a PostgreSQL server", () => {
  afterEach(async () => {
    for (const name of made.splice(0))
      await testDb().query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`);
    for (const role of roles.splice(0))
      await testDb().query(`DROP ROLE IF EXISTS ${pg.escapeIdentifier(role)}`);
  });
  afterAll(closeTestDb);

  it("creates a database the server does not have, and the app can then open it", async () => {
    const name = unusedName();
    expect(await exists(name)).toBe(false);

    expect(await ensureDatabase(serverUrlFor(name))).toEqual({ kind: "created", database: name });

    expect(await exists(name)).toBe(true);
    const client = new pg.Client({ connectionString: serverUrlFor(name) });
    await client.connect();
    expect((await client.query("SELECT current_database() AS name")).rows[0].name).toBe(name);
    await client.end();
  });

  it("leaves an existing database and what is in it alone", async () => {
    const name = unusedName();
    await testDb().query(`CREATE DATABASE ${name}`);
    const client = new pg.Client({ connectionString: serverUrlFor(name) });
    await client.connect();
    await client.query("CREATE TABLE kept (note text); INSERT INTO kept VALUES ('still here')");
    await client.end();

    expect(await ensureDatabase(serverUrlFor(name))).toEqual({ kind: "existed", database: name });

    const after = new pg.Client({ connectionString: serverUrlFor(name) });
    await after.connect();
    expect((await after.query("SELECT note FROM kept")).rows).toEqual([{ note: "still here" }]);
    await after.end();
  });

  it("eight start-ups at once on one missing database, held together at CREATE DATABASE: exactly one creates it, none fails", async () => {
    for (let round = 0; round < 2; round++) {
      const name = unusedName();
      // CREATE DATABASE checks the name, then locks pg_database to insert
      // its row: holding that lock until all eight wait there makes their
      // overlap certain rather than a matter of timing.
      const gate = await testDb().connect();
      let calls: Promise<EnsuredDatabase>[] = [];
      try {
        await gate.query("BEGIN");
        await gate.query("LOCK TABLE pg_database IN SHARE MODE");
        calls = Array.from({ length: 8 }, () => ensureDatabase(serverUrlFor(name)));
        await waitUntil(async () => (await createsWaitingFor(name)) === 8, {
          timeoutMs: 20_000,
          describe: () => `Eight CREATE DATABASE ${name} did not all wait`,
        });
      } finally {
        await gate.query("COMMIT");
        gate.release();
      }

      const kinds = (await Promise.all(calls)).map((outcome) => outcome.kind).sort();

      expect(kinds).toEqual(["created", ...Array<string>(7).fill("created-by-another")]);
      expect(await exists(name)).toBe(true);
    }
  });

  it.each([
    ["quotes", `it's "quoted"`],
    ["spaces", "oncepay with spaces"],
    ["unicode", "oncepay café ☕ 日本"],
    ["SQL in the name", `x"; DROP DATABASE postgres; --`],
  ])(
    "quotes a hostile name (%s) as one identifier, and makes exactly that database",
    async (_, stem) => {
      const name = unusedName(stem);

      expect(await ensureDatabase(serverUrlFor(name))).toEqual({ kind: "created", database: name });

      expect(await exists(name)).toBe(true);
      expect(await exists("postgres")).toBe(true);
      expect(await ensureDatabase(serverUrlFor(name))).toEqual({ kind: "existed", database: name });
    },
  );

  it("a role without CREATEDB: one line naming the createdb command to run, which then works", async () => {
    const role = `oncepay_nocreatedb_${randomBytes(4).toString("hex")}`;
    roles.push(role);
    await testDb().query(`CREATE ROLE ${role} LOGIN NOCREATEDB`);
    const name = unusedName();
    const url = serverUrlFor(name, { user: role });

    const error = await ensureDatabase(url).catch((caught: unknown) => caught);

    expect(error).toBeInstanceOf(DatabaseSetupError);
    const message = (error as Error).message;
    expect(message).not.toContain("\n");
    expect(message).toContain(`database "${name}" does not exist`);
    expect(message).toContain(`role "${role}" may not create databases`);
    expect(await exists(name)).toBe(false);

    // What the line says to run, run as it says (a shell word after "create it as a role that may: ").
    const command = message.slice(message.indexOf("createdb "));
    const { hostname, port } = new URL(serverUrlFor(name));
    expect(command).toBe(
      `createdb -h ${hostname} -p ${port || 5432} -U postgres -O ${role} ${name}`,
    );
    await promisify(execFile)("sh", ["-c", command]);
    expect(await ensureDatabase(url)).toEqual({ kind: "existed", database: name });
  });

  it("a server nobody answers at: one line saying where it looked, at once", async () => {
    const port = await freePort();
    const startedAt = performance.now();

    const error = await ensureDatabase(`postgresql://postgres@127.0.0.1:${port}/oncepay`).catch(
      (caught: unknown) => caught,
    );

    expect(error).toBeInstanceOf(DatabaseSetupError);
    expect((error as Error).message).toMatch(
      new RegExp(
        `^cannot reach PostgreSQL at 127\\.0\\.0\\.1:${port} \\(.*ECONNREFUSED.*\\); start it`,
      ),
    );
    expect(performance.now() - startedAt).toBeLessThan(5_000);
  });

  it("a login the server refuses: one line naming the role, and nothing created", async () => {
    const role = `oncepay_nobody_${randomBytes(4).toString("hex")}`;
    const name = unusedName();

    const error = await ensureDatabase(serverUrlFor(name, { user: role })).catch(
      (caught: unknown) => caught,
    );

    expect(error).toBeInstanceOf(DatabaseSetupError);
    expect((error as Error).message).toMatch(
      new RegExp(`refused role "${role}" \\(.*${role}.*\\); check the user and password`),
    );
    expect(await exists(name)).toBe(false);
  });
});
