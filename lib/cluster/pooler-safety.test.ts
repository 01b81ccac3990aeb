import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, expect, inject, it } from "vitest";
import { startPgBouncer, type PgBouncer } from "@/lib/cluster/pgbouncer";
import { freePort } from "@/lib/process/free-port";
import { cartBody, postOrder } from "@/lib/testing/api-client";
import { startAppServer, type AppServer } from "@/lib/testing/app-server";
import {
  SESSION_STATE_STATEMENTS,
  startWireRecorder,
  type WireRecorder,
} from "@/lib/testing/postgres-wire-recorder";
import { rowsAt } from "@/lib/testing/rows";
import { describeOnServer } from "@/lib/testing/postgres-server-only";

/**
 * What PgBouncer's transaction mode breaks, watched on the wire: an app
 * behind PgBouncer, with a recorder between them that reads every statement
 * the app sends, while the app does all it does (checkouts, replays,
 * conflicts, a crash after the charge finished by the recovery worker, the
 * reaper, the ledger, the rate limits, readiness, metrics). Not one named
 * prepared statement, and nothing that sets session state. Migrations,
 * which hold a session advisory lock, went straight to PostgreSQL.
 */
let workDir: string;
let pooler: PgBouncer;
let recorder: WireRecorder;
let app: AppServer;

describeOnServer("pooler", "behind PgBouncer in transaction mode", () => {
  beforeAll(async () => {
    workDir = await mkdtemp(path.join(tmpdir(), "oncepay-pooler-"));
    pooler = await startPgBouncer({
      databaseUrl: inject("databaseUrl"),
      port: await freePort(),
      poolSize: 4,
      workDir,
      output: () => undefined,
    });
    recorder = await startWireRecorder(pooler.url);
    app = await startAppServer({
      env: {
        DATABASE_URL: recorder.url,
        DIRECT_DATABASE_URL: inject("databaseUrl"),
        IDEMPOTENCY_LEASE_SECONDS: "1",
        RECOVERY_INTERVAL_SECONDS: "1",
        REAPER_INTERVAL_SECONDS: "1",
      },
    });
  }, 120_000);

  afterAll(async () => {
    await app?.stop();
    await recorder?.close();
    await pooler?.stop();
    if (workDir) await rm(workDir, { recursive: true, force: true });
  });

  it("sends no named prepared statement and no session state, whatever the app does", async () => {
    const rows = rowsAt(inject("databaseUrl"));
    const account = (await (
      await fetch(`${app.baseUrl}/api/accounts`, { method: "POST" })
    ).json()) as { id: string; token: string };
    const order = (key: string, body = cartBody(), headers: Record<string, string> = {}) =>
      postOrder({ baseUrl: app.baseUrl, token: account.token, key, body, headers });

    const key = randomUUID();
    const body = cartBody();
    const statuses = (await Promise.all(Array.from({ length: 8 }, () => order(key, body)))).map(
      ({ response }) => response.status,
    );
    expect(statuses.filter((status) => status === 201)).not.toHaveLength(0);
    expect((await order(key, body)).response.headers.get("idempotent-replayed")).toBe("true");
    expect((await order(key, cartBody())).response.status).toBe(422);

    // Dies after the charge; the recovery worker finishes it from the stored request.
    const crashed = randomUUID();
    expect(
      (await order(crashed, cartBody(), { "OncePay-Fault": "after-charge" })).response.status,
    ).toBe(500);
    await expect
      .poll(async () => (await rows.keyRow(account.id, crashed))?.state, { timeout: 15_000 })
      .toBe("complete");

    // The reaper deletes a key whose life ran out.
    await rows.expireKey(account.id, key);
    await expect
      .poll(async () => rows.keyRow(account.id, key), { timeout: 15_000 })
      .toBeUndefined();

    const auth = { Authorization: `Bearer ${account.token}` };
    expect((await fetch(`${app.baseUrl}/api/orders?limit=2`, { headers: auth })).status).toBe(200);
    expect((await fetch(`${app.baseUrl}/api/keys/${crashed}`, { headers: auth })).status).toBe(200);
    expect((await fetch(`${app.baseUrl}/orders`)).status).toBe(200);
    expect((await fetch(`${app.baseUrl}/api/ready`)).status).toBe(200);
    expect((await fetch(`${app.baseUrl}/api/metrics`)).status).toBe(200);

    const statements = recorder.statements();
    // The recorder saw every way the app talks to PostgreSQL: the hot path's
    // plain SQL (the claim, the rate limit's count, the order's rows and the
    // key's completion in one transaction), Prisma's queries, and the
    // workers' (the reaper's, and the ended rate-limit windows' sweep).
    const seen = (pattern: RegExp) => statements.some((statement) => pattern.test(statement.sql));
    for (const pattern of [
      /INSERT INTO idempotency_keys/,
      /WITH unrecorded AS/,
      /SET state = 'complete'/,
      /INSERT INTO rate_limits/,
      /"public"\."accounts"/,
      /DELETE FROM idempotency_keys/,
      /DELETE FROM rate_limits/,
    ]) {
      expect(seen(pattern), `a statement matching ${pattern}`).toBe(true);
    }
    const named = statements.filter(
      (statement) => statement.kind === "parse" && statement.name !== "",
    );
    expect(named, "named prepared statements").toEqual([]);
    const sessionState = statements.filter((statement) =>
      SESSION_STATE_STATEMENTS.some((pattern) => pattern.test(statement.sql)),
    );
    expect(sessionState, "statements that set session state").toEqual([]);
  }, 60_000);

  it("the recorder sees what it must refuse: a named statement and a session SET", async () => {
    const probe = await startWireRecorder(pooler.url);
    const client = new pg.Client({ connectionString: probe.url });
    await client.connect();
    try {
      await client.query({ name: "probe_statement", text: "SELECT $1::int AS n", values: [1] });
      await client.query("SET search_path TO public");
    } finally {
      await client.end();
      await probe.close();
    }
    const seen = probe.statements();
    expect(seen).toContainEqual({
      kind: "parse",
      name: "probe_statement",
      sql: "SELECT $1::int AS n",
    });
    expect(
      seen.some((statement) =>
        SESSION_STATE_STATEMENTS.some((pattern) => pattern.test(statement.sql)),
      ),
    ).toBe(true);
  });
});
