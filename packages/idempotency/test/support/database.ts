import { randomBytes } from "node:crypto";
import { readFile } from "node:fs/promises";
import { PGlite } from "@electric-sql/pglite";
import { PGLiteSocketServer } from "@electric-sql/pglite-socket";
import pg from "pg";

/**
 * A database of the test's own, with the package's migration applied and a
 * table for the test operations' own writes: a fresh database on the
 * PostgreSQL server that DATABASE_URL names, or, without it, PGlite in
 * memory (one session: correct, but nothing overlaps, so race tests need
 * the server).
 */
export interface TestDatabase {
  url: string;
  /** True on a PostgreSQL server, where requests really overlap. */
  concurrent: boolean;
  /** How statements go to it: PGlite has one session, where prepared names of two connections would collide. */
  statements: "prepared" | "unnamed";
  pool: pg.Pool;
  /** Runs one statement on a connection of its own (a test's checks). */
  rows<Row>(text: string, values?: unknown[]): Promise<Row[]>;
  close(): Promise<void>;
}

const MIGRATION = new URL("../../migrations/001_idempotency_keys.sql", import.meta.url);

/** What the test operations write: one row per effect, so a test can count them. */
const TEST_TABLES = `CREATE TABLE effects (
  id serial PRIMARY KEY,
  scope text NOT NULL,
  label text NOT NULL,
  key_id uuid
)`;

export async function openTestDatabase(): Promise<TestDatabase> {
  const serverUrl = process.env.DATABASE_URL;
  const opened = serverUrl ? await freshServerDatabase(serverUrl) : await pgliteDatabase();
  const pool = new pg.Pool({ connectionString: opened.url, max: opened.concurrent ? 20 : 1 });
  // pool.end() resolves before its connections have closed, and dropping the
  // database ends the stragglers with an error: a pool without a listener
  // would throw it, failing a run whose tests passed.
  pool.on("error", () => undefined);
  await pool.query(await readFile(MIGRATION, "utf8"));
  await pool.query(TEST_TABLES);
  return {
    url: opened.url,
    concurrent: opened.concurrent,
    statements: opened.concurrent ? "prepared" : "unnamed",
    pool,
    rows: async <Row>(text: string, values: unknown[] = []) =>
      (await pool.query(text, values)).rows as Row[],
    async close() {
      await pool.end();
      await opened.close();
    },
  };
}

async function freshServerDatabase(serverUrl: string) {
  const name = `idempotency_test_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    concurrent: true,
    async close() {
      const dropper = new pg.Client({ connectionString: serverUrl });
      await dropper.connect();
      await dropper.query(`DROP DATABASE ${name} WITH (FORCE)`);
      await dropper.end();
    },
  };
}

async function pgliteDatabase() {
  const db = await PGlite.create();
  // PGlite runs one session, where two connections' protocol messages would
  // interleave if they overlapped: each pool opens one connection, and the
  // tests use them one after another. The slots are for the pools of a
  // test (its checks, a Prisma client, a crash server) and a closed
  // connection's successor, let in before the server has noticed the close.
  const server = new PGLiteSocketServer({ db, host: "127.0.0.1", port: 0, maxConnections: 8 });
  await server.start();
  const port = Number(server.getServerConn().split(":").pop());
  return {
    url: `postgresql://postgres@127.0.0.1:${port}/postgres?sslmode=disable`,
    concurrent: false,
    async close() {
      await server.stop();
      await db.close();
    },
  };
}
