import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { startEmbeddedDatabase, type EmbeddedDatabase } from "@/lib/db/embedded";
import { startAppServer, type AppServer } from "@/lib/testing/app-server";
import { keyRowIn, rowCountsIn, stuckKeysIn } from "@/lib/testing/crash-database";
import { startDatabaseProxy, type DatabaseOutageProxy } from "@/lib/testing/tcp-proxy";

/**
 * The database goes away under the app: connections refused, or dropped in
 * the middle of a checkout. The client must get 503 problem+json with
 * Retry-After, no key may stay stuck past its lease, and retries with the
 * same key must succeed once the database is back, with one order.
 */
const LEASE_SECONDS = 2;

let proxy: DatabaseOutageProxy;
let server: AppServer;
let embedded: EmbeddedDatabase | undefined;
let workDir: string;
let directUrl: string;

beforeAll(async () => {
  workDir = await mkdtemp(path.join(tmpdir(), "oncepay-outage-"));
  if (inject("realPostgres")) {
    directUrl = inject("databaseUrl");
  } else {
    embedded = await startEmbeddedDatabase(path.join(workDir, "pglite"), 15);
    directUrl = embedded.url;
  }
  proxy = await startDatabaseProxy(directUrl);
  server = await startAppServer({ env: { DATABASE_URL: proxy.url, IDEMPOTENCY_LEASE_SECONDS: String(LEASE_SECONDS) } });
});

afterAll(async () => {
  await server?.stop();
  await proxy?.close();
  await embedded?.close();
  await rm(workDir, { recursive: true, force: true });
});

async function newAccount() {
  return (await (await fetch(`${server.baseUrl}/api/accounts`, { method: "POST" })).json()) as { id: string; token: string };
}

function order(token: string, key: string, body: string) {
  return fetch(`${server.baseUrl}/api/orders`, {
    method: "POST",
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json", "Idempotency-Key": key },
    body,
  });
}

async function retryUntilAnswered(token: string, key: string, body: string): Promise<Response> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const response = await order(token, key, body);
    if (response.status !== 409 && response.status < 500) return response;
    if (Date.now() > deadline) throw new Error(`still ${response.status} after 20 s`);
    await new Promise((resolve) => setTimeout(resolve, Number(response.headers.get("retry-after") ?? 1) * 1000));
  }
}

async function expect503(response: Response) {
  expect(response.status).toBe(503);
  expect(response.headers.get("content-type")).toBe("application/problem+json");
  expect(Number(response.headers.get("retry-after"))).toBeGreaterThan(0);
  expect(await response.json()).toMatchObject({ status: 503, type: "urn:oncepay:problem:database-unavailable" });
}

describe("a database outage", () => {
  it("refused connections: 503 with Retry-After, and the same key succeeds once the database is back", async () => {
    const account = await newAccount();
    const key = randomUUID();
    const body = JSON.stringify({ cartId: "outage-refused", items: [{ sku: "mug-ceramic-350", quantity: 1 }] });

    await proxy.cut();
    try {
      await expect503(await order(account.token, key, body));
    } finally {
      await proxy.restore();
    }

    expect((await retryUntilAnswered(account.token, key, body)).status).toBe(201);
    expect(await rowCountsIn(directUrl, account.id)).toEqual({ orders: 1, payments: 1 });
  });

  it("connections dropped mid-checkout: 503, no key stuck past its lease, one order after the retries", async () => {
    const account = await newAccount();
    // Hold the checkout just after its claim, so the outage lands mid-request.
    const settings = await fetch(`${server.baseUrl}/api/demo/settings`, {
      method: "PUT",
      headers: { Authorization: `Bearer ${account.token}`, "Content-Type": "application/json" },
      body: JSON.stringify({ networkDelayMs: 1500, loseResponse: false }),
    });
    expect(settings.status).toBe(200);
    const key = randomUUID();
    const body = JSON.stringify({ cartId: "outage-dropped", items: [{ sku: "beans-house-250", quantity: 2 }] });

    const inFlight = order(account.token, key, body);
    await new Promise((resolve) => setTimeout(resolve, 500));
    await proxy.cut();
    try {
      await expect503(await inFlight);
    } finally {
      await proxy.restore();
    }

    const answer = await retryUntilAnswered(account.token, key, body);
    expect(answer.status).toBe(201);
    expect(await keyRowIn(directUrl, account.id, key)).toMatchObject({ state: "complete" });
    expect(await stuckKeysIn(directUrl, account.id)).toBe(0);
    expect(await rowCountsIn(directUrl, account.id)).toEqual({ orders: 1, payments: 1 });
  });
});
