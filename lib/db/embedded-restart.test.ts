import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAccount, postOrder } from "@/lib/testing/api-client";
import { startAppServer, type AppServer } from "@/lib/testing/app-server";

/**
 * `npm start` on a machine with no DATABASE_URL: the launcher runs the
 * embedded PGlite with its data in a folder, says so, and a paid order is
 * still there after a clean restart. Runs on the embedded database even in
 * CI, where the other tests use PostgreSQL.
 */
const TTL_SECONDS = 120;
// Two starts of the embedded database (one cold: initdb) take ~15 s alone and
// over 30 s on a busy 2-core machine.
const EMBEDDED_TEST_TIMEOUT_MS = 90_000;

let dataDir: string;
let server: AppServer | undefined;

beforeAll(async () => {
  dataDir = path.join(await mkdtemp(path.join(tmpdir(), "oncepay-embedded-")), "pglite");
});

afterAll(async () => {
  await server?.stop();
  await rm(path.dirname(dataDir), { recursive: true, force: true });
});

function start(): Promise<AppServer> {
  return startAppServer({
    embedded: true,
    embeddedDataDir: dataDir,
    env: { IDEMPOTENCY_TTL_SECONDS: String(TTL_SECONDS) },
  });
}

async function keyLifetimeSeconds(databaseUrl: string, accountId: string): Promise<number> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ seconds: number }>(
      `SELECT extract(epoch FROM expires_at - created_at)::int AS seconds FROM idempotency_keys WHERE scope = $1`,
      [accountId],
    );
    return rows[0]!.seconds;
  } finally {
    await client.end();
  }
}

describe("the embedded database", () => {
  it(
    "is used without DATABASE_URL, says so, keeps a paid order across a clean restart, and keys live IDEMPOTENCY_TTL_SECONDS",
    { timeout: EMBEDDED_TEST_TIMEOUT_MS },
    async () => {
      server = await start();
      expect(server.realPostgres).toBe(false);
      expect(server.output()).toMatch(
        /\[oncepay\] database: embedded PGlite, data in .*pglite.*\(no DATABASE_URL set\)/,
      );

      const account = await createAccount(server.baseUrl);
      const key = randomUUID();
      const checkout = () =>
        postOrder({
          baseUrl: server!.baseUrl,
          token: account.token,
          key,
          body: { cartId: "embedded", items: [{ sku: "dripper-v60-02", quantity: 1 }] },
        });
      const paid = await checkout();
      expect(paid.response.status).toBe(201);
      const paidText = paid.text;
      const orderId = (JSON.parse(paidText) as { id: string }).id;
      expect(await keyLifetimeSeconds(server.databaseUrl, account.id)).toBe(TTL_SECONDS);

      // SIGTERM, as a process manager would: the launcher closes the database before it exits.
      await server.stop();
      expect(server.output()).toContain("[oncepay] embedded database closed");
      server = await start();
      expect(server.output()).toMatch(/migrations: up to date/);

      const fetched = await fetch(`${server.baseUrl}/api/orders/${orderId}`, {
        headers: { Authorization: `Bearer ${account.token}` },
      });
      expect(fetched.status).toBe(200);
      expect(await fetched.text()).toBe(paidText);
      const replay = await checkout();
      expect(replay.response.headers.get("idempotent-replayed")).toBe("true");
      expect(replay.text).toBe(paidText);
    },
  );
});
