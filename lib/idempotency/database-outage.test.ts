import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { startEmbeddedDatabase, type EmbeddedDatabase } from "@/lib/db/embedded";
import { paymentProviderKeyPrefix } from "@/lib/orders/provider-key";
import type { PaymentSimulator } from "@/lib/payments/simulator/server";
import { ledgerFor, setFaults, startTestSimulator } from "@/lib/testing/payment-simulator";
import { startAppServer, type AppServer } from "@/lib/testing/app-server";
import { HOLD_WHILE_OTHERS_ARRIVE_MS } from "@/lib/testing/api-client-demo";
import { rowsAt } from "@/lib/testing/rows";
import { expectNoInternalText, loggedLine } from "@/lib/testing/internal-text";
import { startOutageProxy, type OutageProxy } from "@/lib/testing/tcp-proxy";

/**
 * The database goes away under the app: connections refused, or dropped in
 * the middle of a checkout. The client must get 503 problem+json with
 * Retry-After, no key may stay stuck past its lease, and retries with the
 * same key must succeed once the database is back, with one order and one
 * charge. The payment simulator keeps its own connection to the database,
 * outside the proxy: the outage is OncePay's, the provider stays up.
 */
const LEASE_SECONDS = 2;

let proxy: OutageProxy;
let server: AppServer;
let embedded: EmbeddedDatabase | undefined;
let workDir: string;
let directUrl: string;
let simulator: PaymentSimulator;

beforeAll(async () => {
  workDir = await mkdtemp(path.join(tmpdir(), "oncepay-outage-"));
  if (inject("realPostgres")) {
    directUrl = inject("databaseUrl");
  } else {
    embedded = await startEmbeddedDatabase(path.join(workDir, "pglite"), 15);
    directUrl = embedded.url;
  }
  proxy = await startOutageProxy(directUrl);
  simulator = await startTestSimulator();
  server = await startAppServer({
    env: {
      DATABASE_URL: proxy.url,
      PAYMENT_SIMULATOR_URL: simulator.url,
      IDEMPOTENCY_LEASE_SECONDS: String(LEASE_SECONDS),
      // Behind the proxy the app cannot tell that the embedded database
      // serves every connection from one session, where a statement one
      // connection prepared collides with another's (or with a dropped
      // connection's): tell it, as the launcher does.
      ...(embedded && { DATABASE_STATEMENTS: "unnamed" }),
    },
  });
});

afterAll(async () => {
  await server?.stop();
  await simulator?.close();
  await proxy?.close();
  await embedded?.close();
  await rm(workDir, { recursive: true, force: true });
});

async function newAccount() {
  return (await (await fetch(`${server.baseUrl}/api/accounts`, { method: "POST" })).json()) as {
    id: string;
    token: string;
  };
}

function order(token: string, key: string, body: string) {
  return fetch(`${server.baseUrl}/api/orders`, {
    method: "POST",
    headers: {
      Authorization: `Bearer ${token}`,
      "Content-Type": "application/json",
      "Idempotency-Key": key,
    },
    body,
  });
}

async function retryUntilAnswered(token: string, key: string, body: string): Promise<Response> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const response = await order(token, key, body);
    if (response.status !== 409 && response.status < 500) return response;
    if (Date.now() > deadline) throw new Error(`still ${response.status} after 20 s`);
    await new Promise((resolve) =>
      setTimeout(resolve, Number(response.headers.get("retry-after") ?? 1) * 1000),
    );
  }
}

async function expect503(response: Response) {
  expect(response.status).toBe(503);
  expect(response.headers.get("content-type")).toBe("application/problem+json");
  expect(Number(response.headers.get("retry-after"))).toBeGreaterThan(0);
  expect(await response.json()).toMatchObject({
    status: 503,
    type: "/problems/database-unavailable",
  });
}

describe("a database outage", () => {
  it("readiness answers 503 while it is gone, with no host, port or driver message (those go to the log), health stays 200, and both recover", async () => {
    expect((await fetch(`${server.baseUrl}/api/ready`)).status).toBe(200);
    await proxy.cut();
    try {
      // Readiness answers from a probe shared for a second: the outage shows by the next one.
      let ready = await fetch(`${server.baseUrl}/api/ready`);
      const deadline = Date.now() + 10_000;
      while (ready.status === 200 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        ready = await fetch(`${server.baseUrl}/api/ready`);
      }
      expect(ready.status).toBe(503);
      expect(ready.headers.get("content-type")).toBe("application/problem+json");
      expect(Number(ready.headers.get("retry-after"))).toBeGreaterThan(0);
      expect(ready.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
      const text = await ready.text();
      const problem = JSON.parse(text) as {
        type: string;
        checkedAt: string;
        checks: Record<string, { ok: boolean; reason?: string }>;
      };
      expect(problem.type).toBe("/problems/not-ready");
      expect(problem.checks).toEqual({ database: { ok: false, ms: expect.any(Number) } });
      expectNoInternalText(text, new URL(proxy.url).port);
      // The reason is the operator's: in the log line of the probe that answered.
      const logged = await loggedLine(
        server,
        (line) => line.event === "readiness.not_ready" && line.checkedAt === problem.checkedAt,
      );
      const reason = (logged?.checks as { database?: { reason?: string } } | undefined)?.database
        ?.reason;
      expect(reason, "the probe's log line says why").toMatch(/\w{4,}/);
      expect(text).not.toContain(reason);
      expect((await fetch(`${server.baseUrl}/api/health`)).status).toBe(200);
    } finally {
      await proxy.restore();
    }
    await expect
      .poll(async () => (await fetch(`${server.baseUrl}/api/ready`)).status, { timeout: 10_000 })
      .toBe(200);
  });

  it("refused connections: 503 with Retry-After, and the same key succeeds once the database is back", async () => {
    const account = await newAccount();
    const key = randomUUID();
    const body = JSON.stringify({
      cartId: "outage-refused",
      items: [{ sku: "mug-ceramic-350", quantity: 1 }],
    });

    await proxy.cut();
    try {
      await expect503(await order(account.token, key, body));
    } finally {
      await proxy.restore();
    }

    expect((await retryUntilAnswered(account.token, key, body)).status).toBe(201);
    expect(await rowsAt(directUrl).rowCounts(account.id)).toEqual({ orders: 1, payments: 1 });
  });

  it("connections dropped mid-checkout: 503, no key stuck past its lease, one order after the retries", async () => {
    const account = await newAccount();
    // Hold the checkout just after its claim, so the outage lands mid-request.
    const settings = await fetch(`${server.baseUrl}/api/demo/settings`, {
      method: "PUT",
      headers: { Authorization: `Bearer ${account.token}`, "Content-Type": "application/json" },
      body: JSON.stringify({ networkDelayMs: HOLD_WHILE_OTHERS_ARRIVE_MS, loseResponse: false }),
    });
    expect(settings.status).toBe(200);
    const key = randomUUID();
    const body = JSON.stringify({
      cartId: "outage-dropped",
      items: [{ sku: "beans-house-250", quantity: 2 }],
    });

    const inFlight = order(account.token, key, body);
    // Cut once the claim is made (the held checkout waits at
    // "payment_started", where its claim put it), not after a guess: a cut
    // before the claim tests a refused connection instead.
    await expect
      .poll(async () => (await rowsAt(directUrl).keyRow(account.id, key))?.recovery_point, {
        interval: 50,
      })
      .toBe("payment_started");
    await proxy.cut();
    try {
      await expect503(await inFlight);
    } finally {
      await proxy.restore();
    }

    const answer = await retryUntilAnswered(account.token, key, body);
    expect(answer.status).toBe(201);
    expect(await rowsAt(directUrl).keyRow(account.id, key)).toMatchObject({ state: "complete" });
    expect(await rowsAt(directUrl).stuckKeys(account.id)).toBe(0);
    expect(await rowsAt(directUrl).rowCounts(account.id)).toEqual({ orders: 1, payments: 1 });
  });

  it("connections dropped while the provider charges: 503, the key kept at payment_started, then one order and one charge", async () => {
    const account = await newAccount();
    const key = randomUUID();
    const body = JSON.stringify({
      cartId: "outage-after-charge",
      items: [{ sku: "kettle-gooseneck-1l", quantity: 1 }],
    });
    // The provider takes 1.5 s to charge; the database goes away meanwhile,
    // so the charge happens but its answer cannot be recorded.
    await setFaults(simulator, { latencyMs: 1500 });
    try {
      const inFlight = order(account.token, key, body);
      await expect
        .poll(async () => (await rowsAt(directUrl).keyRow(account.id, key))?.recovery_point, {
          interval: 50,
        })
        .toBe("payment_started");
      await proxy.cut();
      try {
        await expect503(await inFlight);
      } finally {
        await proxy.restore();
      }
    } finally {
      await setFaults(simulator, {});
    }
    const charges = () =>
      ledgerFor(simulator, { idempotencyKeyPrefix: paymentProviderKeyPrefix(account.id) });
    expect((await charges()).charges).toHaveLength(1);
    expect(await rowsAt(directUrl).keyRow(account.id, key)).toMatchObject({
      state: "in_flight",
      recovery_point: "payment_started",
    });

    // The retry waits out the dead attempt's lease, takes the key over and gets the first charge back.
    const answer = await retryUntilAnswered(account.token, key, body);
    expect(answer.status).toBe(201);
    expect(await rowsAt(directUrl).keyRow(account.id, key)).toMatchObject({ state: "complete" });
    expect(await rowsAt(directUrl).stuckKeys(account.id)).toBe(0);
    expect(await rowsAt(directUrl).rowCounts(account.id)).toEqual({ orders: 1, payments: 1 });
    const ledger = await charges();
    expect(ledger.charges.map((charge) => charge.status)).toEqual(["succeeded"]);
    expect((await answer.json()).payment.id).toBe(ledger.payment_intents[0]?.id);
  });
});
