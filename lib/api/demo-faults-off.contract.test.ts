import { randomUUID } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cartBody, createAccount, postOrder, type ApiAccount } from "@/lib/testing/api-client";
import { setDemoSettings } from "@/lib/testing/api-client-demo";
import { startAppServer, type AppServer } from "@/lib/testing/app-server";
import { rowsAt } from "@/lib/testing/rows";

/**
 * A server started with DEMO_FAULTS=off, the default wherever DATABASE_URL is
 * set: no demo fault can be switched on or fire, whatever an account's stored
 * settings say, and the lab's broken strategies charge nothing. The shared
 * test app runs with faults on, so this file starts one app of its own.
 */
let server: AppServer;
let db: pg.Pool;

beforeAll(async () => {
  server = await startAppServer({ env: { DEMO_FAULTS: "off" } });
  db = new pg.Pool({ connectionString: server.databaseUrl, max: 2 });
  // pool.end() resolves before its connections have closed; stopping the
  // app's database ends the stragglers with an error, which must not be unhandled.
  db.on("error", () => undefined);
});

afterAll(async () => {
  await db?.end();
  await server?.stop();
});

const demoFaultsDisabled = {
  type: "/problems/demo-faults-disabled",
  title: "Demo faults are disabled",
  status: 403,
};

async function getSettings(account: ApiAccount) {
  const response = await fetch(`${server.baseUrl}/api/demo/settings`, {
    headers: { Authorization: `Bearer ${account.token}` },
  });
  return { status: response.status, body: await response.json() };
}

/** Payment intents in the payment simulator's ledger (all accounts): unchanged means nothing was charged. */
async function chargesAtProvider(): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM payment_simulator.payment_intents`,
  );
  return rows[0]!.n;
}

describe("a server with DEMO_FAULTS=off", () => {
  it("refuses to switch demo faults on, and says they are off", async () => {
    const account = await createAccount(server.baseUrl);
    const put = await setDemoSettings(
      account.token,
      { networkDelayMs: 1000, loseResponse: true },
      server.baseUrl,
    );
    expect(put.status).toBe(403);
    expect(put.headers.get("content-type")).toBe("application/problem+json");
    expect(await put.json()).toMatchObject(demoFaultsDisabled);

    expect(await getSettings(account)).toEqual({
      status: 200,
      body: { faultsEnabled: false, networkDelayMs: 0, loseResponse: false },
    });
  });

  it.each([
    ["/api/lab/unsafe-orders", "No key"],
    ["/api/lab/check-then-insert-orders", "Check, then insert"],
    ["/api/lab/claim-after-charge-orders", "Claim after the charge"],
    ["/api/lab/dynamodb-orders", "Separate key store (DynamoDB)"],
    ["/api/lab/redis-orders", "Separate key store (Redis)"],
    ["/api/lab/powertools-orders", "Powertools (DynamoDB)"],
  ])(
    "refuses the lab's broken strategy at %s with the same 403, before charging anything",
    async (path, name) => {
      const account = await createAccount(server.baseUrl);
      const chargesBefore = await chargesAtProvider();

      const response = await fetch(`${server.baseUrl}${path}`, {
        method: "POST",
        headers: {
          Authorization: `Bearer ${account.token}`,
          "Content-Type": "application/json",
          "Idempotency-Key": randomUUID(),
        },
        body: JSON.stringify(cartBody()),
      });
      expect(response.status).toBe(403);
      expect(response.headers.get("content-type")).toBe("application/problem+json");
      expect(await response.json()).toMatchObject({
        ...demoFaultsDisabled,
        detail: expect.stringContaining(`"${name}" strategy is switched off`),
      });

      expect(await rowsAt(server.databaseUrl).rowCounts(account.id)).toEqual({
        orders: 0,
        payments: 0,
      });
      expect(await chargesAtProvider()).toBe(chargesBefore);
    },
  );

  it("starts no storm of the lab's own strategies and no crash scenario, but still a storm of the real checkout", async () => {
    const account = await createAccount(server.baseUrl);
    const start = (strategy: string) =>
      fetch(`${server.baseUrl}/api/lab/storms`, {
        method: "POST",
        headers: { Authorization: `Bearer ${account.token}`, "Content-Type": "application/json" },
        body: JSON.stringify({ strategy, size: 10 }),
      });

    for (const strategy of [
      "no_key",
      "check_then_insert",
      "claim_after_charge",
      "dynamodb_key_store",
      "redis_key_store",
      "powertools",
    ]) {
      const refused = await start(strategy);
      expect(refused.status).toBe(403);
      expect(await refused.json()).toMatchObject(demoFaultsDisabled);
    }
    const crash = await fetch(`${server.baseUrl}/api/lab/storms`, {
      method: "POST",
      headers: { Authorization: `Bearer ${account.token}`, "Content-Type": "application/json" },
      body: JSON.stringify({ strategy: "atomic_claim", kind: "crash" }),
    });
    expect(crash.status).toBe(403);
    expect(await crash.json()).toMatchObject({
      ...demoFaultsDisabled,
      detail: expect.stringContaining("crash scenario"),
    });
    const real = await start("atomic_claim");
    expect(real.status).toBe(201);
    expect(await real.json()).toMatchObject({
      strategy: "atomic_claim",
      size: 10,
      request: { path: "/api/orders" },
    });
    const { rows } = await db.query(`SELECT strategy::text FROM lab_storms WHERE account_id = $1`, [
      account.id,
    ]);
    expect(rows).toEqual([{ strategy: "atomic_claim" }]);
  });

  it("runs no webhook storm, no lab webhook handler and no redelivery demo: 403, and no order is made", async () => {
    const account = await createAccount(server.baseUrl);
    const asAccount = {
      Authorization: `Bearer ${account.token}`,
      "Content-Type": "application/json",
    };
    const answers = await Promise.all([
      fetch(`${server.baseUrl}/api/lab/webhook-storms`, {
        method: "POST",
        headers: asAccount,
        body: JSON.stringify({ design: "no_event_record", size: 10 }),
      }),
      fetch(`${server.baseUrl}/api/lab/webhooks/no-event-record`, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: "{}",
      }),
      fetch(`${server.baseUrl}/api/demo/webhook-redeliveries`, {
        method: "POST",
        headers: asAccount,
        body: JSON.stringify({ orderId: "8f1c1f0e-5a5b-4c1e-9a43-0d6f3b2b7c10" }),
      }),
    ]);
    for (const answer of answers) {
      expect(answer.status).toBe(403);
      expect(await answer.json()).toMatchObject(demoFaultsDisabled);
    }
    const { rows } = await db.query(`SELECT FROM orders WHERE account_id = $1`, [account.id]);
    expect(rows).toHaveLength(0);
  });

  it("ignores an account's stored lost-response setting: the checkout is answered and the setting is untouched", async () => {
    const account = await createAccount(server.baseUrl);
    // Stored while faults were on, say; the API cannot write it now.
    await db.query(
      `INSERT INTO demo_settings (account_id, network_delay_ms, lose_response, updated_at) VALUES ($1, 0, true, now())`,
      [account.id],
    );
    const readSetting = async () =>
      (
        await db.query(
          `SELECT lose_response, updated_at FROM demo_settings WHERE account_id = $1`,
          [account.id],
        )
      ).rows[0];
    const before = await readSetting();
    expect(before.lose_response).toBe(true);

    const { response, text } = await postOrder({
      token: account.token,
      key: randomUUID(),
      body: cartBody(),
      baseUrl: server.baseUrl,
    });
    expect(response.status).toBe(201);
    expect(JSON.parse(text)).toMatchObject({ object: "order", status: "paid" });

    expect(await rowsAt(server.databaseUrl).rowCounts(account.id)).toEqual({
      orders: 1,
      payments: 1,
    });
    expect(await readSetting()).toEqual(before);
  });
});
