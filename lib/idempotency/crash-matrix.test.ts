import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startAppServer, type AppServer } from "@/lib/testing/app-server";
import { keyRowIn, rowCountsIn, stuckKeysIn } from "@/lib/testing/crash-database";

/**
 * The crash matrix: the app is killed with SIGKILL at each dangerous point of
 * a checkout, restarted, and the client retries with the same key. Each run
 * must end with exactly one order, exactly one charge, the key complete, and
 * one consistent answer for the client.
 *
 * CRASH_RUNS sets the runs per point (5 in `npm test`; `npm run test:crash`
 * runs 20). The lease is 2 s so that a crashed attempt's key can be taken
 * over quickly.
 */
const RUNS_PER_POINT = Number(process.env.CRASH_RUNS ?? 5);
const CRASH_POINTS = ["crash-after-claim", "crash-after-charge", "crash-before-commit", "crash-after-commit"] as const;
const LEASE_SECONDS = 2;
const RETRY_BUDGET_MS = 20_000;

let server: AppServer;
let dataDir: string;
const summary: Record<string, { runs: number; orders: number[]; charges: number[]; stuckKeys: number; retries: number[] }> = {};

async function start(): Promise<AppServer> {
  return startAppServer({ env: { IDEMPOTENCY_LEASE_SECONDS: String(LEASE_SECONDS) }, embeddedDataDir: dataDir });
}

beforeAll(async () => {
  dataDir = path.join(await mkdtemp(path.join(tmpdir(), "oncepay-crash-")), "pglite");
  server = await start();
});

afterAll(async () => {
  await server?.stop();
  await rm(path.dirname(dataDir), { recursive: true, force: true });
  console.info(
    "[crash matrix]\n" +
      Object.entries(summary)
        .map(([point, s]) =>
          `${point.padEnd(20)} runs=${s.runs} orders/run=${[...new Set(s.orders)].join(",")} charges/run=${[...new Set(s.charges)].join(",")} stuck keys=${s.stuckKeys} retries/run=${Math.min(...s.retries)}..${Math.max(...s.retries)}`,
        )
        .join("\n"),
  );
});

async function api(pathname: string, init: RequestInit & { token: string }) {
  const { token, ...rest } = init;
  return fetch(`${server.baseUrl}${pathname}`, { ...rest, headers: { ...rest.headers, Authorization: `Bearer ${token}` } });
}

/** What a careful client does: retry the same key, honouring Retry-After, until a definite answer. */
async function retryUntilAnswered(token: string, key: string, body: string): Promise<{ response: Response; text: string; attempts: number }> {
  const deadline = Date.now() + RETRY_BUDGET_MS;
  for (let attempts = 1; ; attempts++) {
    const response = await api("/api/orders", { method: "POST", token, headers: { "Content-Type": "application/json", "Idempotency-Key": key }, body });
    const text = await response.text();
    if (response.status !== 409 && response.status < 500) return { response, text, attempts };
    if (Date.now() > deadline) throw new Error(`No answer within ${RETRY_BUDGET_MS} ms; last status ${response.status}: ${text}`);
    await new Promise((resolve) => setTimeout(resolve, Number(response.headers.get("retry-after") ?? 1) * 1000));
  }
}

describe.each(CRASH_POINTS)("killed at %s", (point) => {
  it(`ends with one order, one charge and a complete key, ${RUNS_PER_POINT} times out of ${RUNS_PER_POINT}`, async () => {
    const record = (summary[point] = { runs: 0, orders: [] as number[], charges: [] as number[], stuckKeys: 0, retries: [] as number[] });
    for (let run = 0; run < RUNS_PER_POINT; run++) {
      const account = (await (await fetch(`${server.baseUrl}/api/accounts`, { method: "POST" })).json()) as { id: string; token: string };
      const key = randomUUID();
      const body = JSON.stringify({ cartId: `crash-${run}`, items: [{ sku: "grinder-hand-burr", quantity: 1 }] });

      const crashed = api("/api/orders", {
        method: "POST",
        token: account.token,
        headers: { "Content-Type": "application/json", "Idempotency-Key": key, "OncePay-Fault": point },
        body,
      });
      await expect(crashed).rejects.toThrow(TypeError); // the connection died with the process
      await server.exited;
      server = await start();

      const answer = await retryUntilAnswered(account.token, key, body);
      expect(answer.response.status).toBe(201);
      const order = JSON.parse(answer.text);
      const fetched = await api(`/api/orders/${order.id}`, { token: account.token });
      expect(await fetched.text()).toBe(answer.text);
      const replay = await retryUntilAnswered(account.token, key, body);
      expect(replay.text).toBe(answer.text);
      expect(replay.response.headers.get("idempotent-replayed")).toBe("true");

      const counts = await rowCountsIn(server.databaseUrl, account.id);
      expect(counts).toEqual({ orders: 1, payments: 1 });
      const keyRow = await keyRowIn(server.databaseUrl, account.id, key);
      expect(keyRow).toMatchObject({ state: "complete", response_status: 201 });
      const stuck = await stuckKeysIn(server.databaseUrl, account.id);
      expect(stuck).toBe(0);

      record.runs++;
      record.stuckKeys += stuck;
      record.orders.push(counts.orders);
      record.charges.push(counts.payments);
      record.retries.push(answer.attempts);
    }
  });
});
