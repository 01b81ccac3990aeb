import { randomUUID } from "node:crypto";
import { setTimeout as delay } from "node:timers/promises";
import pg from "pg";
import { afterAll, beforeAll, expect, inject, it } from "vitest";
import { paymentProviderKeyPrefix } from "@/lib/orders/provider-key";
import type { PaymentSimulator } from "@/lib/payments/simulator/server";
import { cartBody, postOrder } from "@/lib/testing/api-client";
import { startAppServer, type AppServer } from "@/lib/testing/app-server";
import { rowsAt } from "@/lib/testing/rows";
import { setFaults, startTestSimulator } from "@/lib/testing/payment-simulator";
import { checkoutUntilAnswered, type CheckoutRun } from "@/lib/testing/retrying-checkout";
import { startThrowawayPostgres, type ThrowawayPostgres } from "@/lib/testing/throwaway-postgres";
import { describeOnServer } from "@/lib/testing/postgres-server-only";

/**
 * PostgreSQL itself crashes (an immediate shutdown: no checkpoint, and the
 * commits that did not wait for the disk are lost) and comes back. A
 * checkout's claim records that its payment may start, so it waits for the
 * disk (docs/stores.md, "What must be durable"): the first test crashes
 * PostgreSQL where a claim that did not wait would be lost, and finds every
 * key; the second crashes it while charges are at the provider. Every key,
 * retried, ends with exactly one order and exactly one charge.
 *
 * The server is the test's own, with its WAL writer slowed to 10 s and no
 * background writer, so an asynchronous commit stays unflushed until a
 * durable one flushes it: what a crash at the worst moment would find. The
 * payment simulator keeps its ledger on the shared server, as Stripe's
 * would survive our crash.
 */
let postgres: ThrowawayPostgres;
let simulator: PaymentSimulator;
let app: AppServer;
let account: { id: string; token: string };

describeOnServer("crash", "PostgreSQL crashes mid-checkout", () => {
  beforeAll(async () => {
    postgres = await startThrowawayPostgres({
      wal_writer_delay: "10s",
      bgwriter_lru_maxpages: "0",
      // An autovacuum's durable commit would flush the claims the test means to lose.
      autovacuum: "off",
    });
    simulator = await startTestSimulator();
    app = await startAppServer({
      env: {
        DATABASE_URL: postgres.url,
        PAYMENT_SIMULATOR_URL: simulator.url,
        IDEMPOTENCY_LEASE_SECONDS: "2",
        RECOVERY_INTERVAL_SECONDS: "1",
      },
    });
    account = (await (await fetch(`${app.baseUrl}/api/accounts`, { method: "POST" })).json()) as {
      id: string;
      token: string;
    };
  }, 120_000);

  afterAll(async () => {
    await setFaults(simulator, {}).catch(() => undefined);
    await app?.stop();
    await simulator?.close();
    await postgres?.remove();
  });

  it("claims survive the crash: every key is still at payment_started, and each retry pays once", async () => {
    // The slow-network demo holds each checkout 3 s after its claim, before
    // the charge. Just after the WAL writer's flush, a claim that did not
    // wait for the disk would stay unflushed for 10 s, and be lost.
    await setDemoDelay(3000);
    await walWriterJustFlushed();
    const keys = Array.from({ length: 10 }, () => randomUUID());
    // A retry sends its first attempt's body, as a client does: the claim
    // that survived the crash would answer another body 422.
    const bodies = new Map(keys.map((key) => [key, cartBody()]));
    const first = keys.map((key) =>
      postOrder({ baseUrl: app.baseUrl, token: account.token, key, body: bodies.get(key) }).catch(
        () => undefined,
      ),
    );
    await waitForKeys(keys, (points) => points.length === keys.length);
    await crashAndRestart();
    expect(await recoveryPoints(keys)).toEqual(keys.map(() => "payment_started"));
    await Promise.all(first);
    await setDemoDelay(0);

    await expectEachPaidOnce(await Promise.all(keys.map((key) => retry(key, bodies.get(key)))));
  }, 90_000);

  it("a crash while the charges are at the provider: each key, retried, ends with one order and one charge", async () => {
    await setFaults(simulator, { latencyMs: 3000 });
    const keys = Array.from({ length: 30 }, () => randomUUID());
    const runs = keys.map((key) => retry(key));
    // Every key claimed, and some still at the provider: the first ones
    // may already be back with their charge, and that is a case too.
    await waitForKeys(
      keys,
      (points) => points.length === keys.length && points.includes("payment_started"),
    );
    await crashAndRestart();
    await setFaults(simulator, {});
    await expectEachPaidOnce(await Promise.all(runs));
  }, 60_000);
});

function retry(key: string, body: unknown = cartBody()): Promise<CheckoutRun> {
  return checkoutUntilAnswered({
    baseUrl: app.baseUrl,
    token: account.token,
    key,
    body,
    deadlineMs: 45_000,
  });
}

async function crashAndRestart(): Promise<void> {
  await postgres.crash();
  await delay(500);
  await postgres.start();
}

async function expectEachPaidOnce(results: CheckoutRun[]): Promise<void> {
  for (const run of results)
    expect(
      run.final?.status,
      `${run.key}: ${run.attempts.map((attempt) => attempt.status).join(", ")}`,
    ).toBe(201);
  const ordersByKey = await rowsAt(postgres.url).ordersByKey(account.id);
  for (const run of results) expect(ordersByKey.get(run.key), run.key).toBe(1);
  // The provider's ledger, on the shared server: over the whole account, one succeeded charge per order, and none twice under one provider key.
  const charges = await rowsAt(inject("databaseUrl")).chargesByProviderKey(
    paymentProviderKeyPrefix(account.id),
  );
  const orders = [...ordersByKey.values()].reduce((sum, count) => sum + count, 0);
  expect([...charges.values()].reduce((sum, count) => sum + count, 0)).toBe(orders);
  for (const count of charges.values()) expect(count).toBe(1);
}

async function setDemoDelay(networkDelayMs: number): Promise<void> {
  const response = await fetch(`${app.baseUrl}/api/demo/settings`, {
    method: "PUT",
    headers: { Authorization: `Bearer ${account.token}`, "Content-Type": "application/json" },
    body: JSON.stringify({ networkDelayMs, loseResponse: false }),
  });
  expect(response.status).toBe(200);
}

function recoveryPoints(keys: string[]): Promise<string[]> {
  return rowsAt(postgres.url).recoveryPointsOf(account.id, keys);
}

async function waitForKeys(keys: string[], reached: (points: string[]) => boolean): Promise<void> {
  const deadline = Date.now() + 20_000;
  let points = await recoveryPoints(keys);
  while (!reached(points)) {
    if (Date.now() > deadline)
      throw new Error(`the keys did not get there in 20 s: ${points.join(", ") || "none"}`);
    await delay(20);
    points = await recoveryPoints(keys);
  }
}

/**
 * Returns once PostgreSQL's WAL writer has just flushed. Woken by an
 * asynchronous commit for the first time since the server started, or more
 * than `wal_writer_delay` (10 s here) after its last flush, it flushes all
 * the WAL at once; on a busy machine that happens while the claims arrive,
 * nothing is lost in the crash, and the test proves nothing. Just after a
 * flush, the next 10 s flush nothing unless a durable commit does.
 */
async function walWriterJustFlushed(): Promise<void> {
  const db = new pg.Client({ connectionString: postgres.url });
  await db.connect();
  try {
    await db.query("CREATE TABLE IF NOT EXISTS wal_writer_probe (at timestamptz)");
    await db.query("BEGIN");
    await db.query("SET LOCAL synchronous_commit = off");
    await db.query("INSERT INTO wal_writer_probe VALUES (now())");
    await db.query("COMMIT");
    const inserted = await db.query<{ lsn: string }>("SELECT pg_current_wal_insert_lsn() AS lsn");
    const lsn = inserted.rows[0]?.lsn;
    // It wakes every wal_writer_delay (10 s); a net of four wakings, since
    // a busy machine delays it (seen: none within 15 s, both cores loaded).
    const deadline = Date.now() + 40_000;
    for (;;) {
      const flushed = await db.query<{ done: boolean }>(
        "SELECT pg_current_wal_flush_lsn() >= $1::pg_lsn AS done",
        [lsn],
      );
      if (flushed.rows[0]?.done) return;
      if (Date.now() > deadline) throw new Error("the WAL writer flushed nothing in 40 s");
      await delay(50);
    }
  } finally {
    await db.end();
  }
}
