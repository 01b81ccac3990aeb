/**
 * How soon a duplicate gets the first attempt's answer: waiting for it
 * (Prefer: wait), on the same instance and on another, against today's loop
 * of the browser client (a 409, then retries on its schedule):
 *
 *   npm run build && DATABASE_URL=postgresql://… npm run bench:waiting
 *
 * With DATABASE_URL: two instances behind the cluster's pooler, each with
 * its LISTEN connection. Without it: one instance on the embedded database,
 * whose own commits wake its waiters (it has no listener), and no "other
 * instance". A trial is a new key: the first attempt goes to instance 1 and
 * is held HOLD_MS before its charge by the slow-network demo; the duplicate
 * goes a third of that later, to instance 1 or 2. The figure is the time
 * from the first attempt's commit (its key's completed_at, by the
 * database's clock, which is this machine's) to the duplicate's answer.
 * BENCH_TRIALS (100) trials per way, BENCH_CONCURRENCY (8) at a time.
 */
import { randomUUID } from "node:crypto";
import pg from "pg";
import { nextRetryDelayMs } from "../lib/client/retry-policy.ts";
import { startCluster } from "../lib/cluster/cluster.ts";
import { IDEMPOTENCY_KEY_HEADER } from "../lib/http/headers.ts";
import { mapWithLimit } from "../lib/map-with-limit.ts";
import { newAdminKey } from "../lib/payments/simulator/admin-key.ts";
import { startAppServer } from "../lib/testing/app-server.ts";
import { BENCH_APP_ENV, createAccount, newCart } from "./shop-client.ts";

const TRIALS = Number(process.env.BENCH_TRIALS ?? 100);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 8);
const HOLD_MS = 600;

type Way = "wait, same instance" | "wait, other instance" | "409, then retries";

/** Where the trials go: instance URLs, the app's database, and how to stop it all. */
async function start(): Promise<{ urls: string[]; databaseUrl: string; stop(): Promise<void> }> {
  const serverUrl = process.env.DATABASE_URL;
  if (!serverUrl) {
    const app = await startAppServer({ embedded: true, env: BENCH_APP_ENV });
    return { urls: [app.baseUrl], databaseUrl: app.databaseUrl, stop: () => app.stop() };
  }
  const cluster = await startCluster({
    size: 2,
    databaseUrl: serverUrl,
    port: 0,
    poolerPoolSize: 20,
    instancePoolMax: 10,
    simulatorAdminKey: newAdminKey(),
    output: "keep",
    instanceEnv: BENCH_APP_ENV,
  });
  return {
    urls: cluster.instances.map((instance) => instance.url),
    databaseUrl: cluster.databaseUrl,
    stop: () => cluster.stop(),
  };
}

const target = await start();
const WAYS: Way[] =
  target.urls.length > 1
    ? ["wait, same instance", "wait, other instance", "409, then retries"]
    : ["wait, same instance", "409, then retries"];
const database = new pg.Pool({ connectionString: target.databaseUrl, max: 1 });
try {
  const [first, other = first] = target.urls as [string, string?];
  const token = await createAccount(first);
  const demo = await fetch(`${first}/api/demo/settings`, {
    method: "PUT",
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
    body: JSON.stringify({ networkDelayMs: HOLD_MS, loseResponse: false }),
  });
  if (!demo.ok) throw new Error(`PUT /api/demo/settings answered ${demo.status}`);

  console.log(
    `${process.env.DATABASE_URL ? "two instances on PostgreSQL" : "one instance on the embedded database"}; ${TRIALS} trials per way, ${CONCURRENCY} at a time; the first attempt held ${HOLD_MS} ms; ms from its commit to the duplicate's answer`,
  );
  console.log(["way", "median", "p90", "p99", "max", "requests"].map(cell).join(" "));
  for (const way of WAYS) {
    let done = 0;
    const results = await mapWithLimit(
      Array.from({ length: TRIALS }, (_, index) => index),
      CONCURRENCY,
      async () => {
        const result = await trial(
          way,
          token,
          first,
          way === "wait, other instance" ? other : first,
        );
        process.stderr.write(`\r  ${way}: ${++done} of ${TRIALS}`);
        return result;
      },
    );
    process.stderr.write("\r\x1b[K");
    const latencies = results.map((result) => result.latencyMs).sort((a, b) => a - b);
    const requests = results.reduce((sum, result) => sum + result.requests, 0) / results.length;
    console.log(
      [
        way,
        percentile(latencies, 0.5),
        percentile(latencies, 0.9),
        percentile(latencies, 0.99),
        latencies.at(-1)!,
        requests.toFixed(1),
      ]
        .map(cell)
        .join(" "),
    );
  }
} finally {
  await database.end();
  await target.stop();
}

/** One key: the held first attempt, and a duplicate that waits or retries; ms from the commit to its answer. */
async function trial(way: Way, token: string, firstUrl: string, duplicateUrl: string) {
  const key = randomUUID();
  const body = JSON.stringify(newCart());
  const send = (url: string, prefer?: string) =>
    fetch(`${url}/api/orders`, {
      method: "POST",
      headers: {
        Authorization: `Bearer ${token}`,
        "Content-Type": "application/json",
        [IDEMPOTENCY_KEY_HEADER]: key,
        ...(prefer && { Prefer: prefer }),
      },
      body,
    });
  const firstAnswer = send(firstUrl).then((response) => response.text());
  await sleep(HOLD_MS / 3);
  let requests = 0;
  let answer: Response;
  if (way === "409, then retries") {
    // The browser client's loop: Retry-After is the least wait, with its jittered backoff underneath.
    for (let attempt = 1; ; attempt++) {
      answer = await send(duplicateUrl);
      requests++;
      if (answer.status !== 409) break;
      const delay = nextRetryDelayMs({
        attempt,
        retryAfter: answer.headers.get("retry-after"),
        elapsedMs: 0,
      });
      if (delay === null) throw new Error("the retries ran out");
      await answer.arrayBuffer();
      await sleep(delay);
    }
  } else {
    answer = await send(duplicateUrl, "wait=10");
    requests = 1;
  }
  const answeredAt = Date.now();
  if (answer.status !== 201 || answer.headers.get("idempotent-replayed") !== "true")
    throw new Error(`the duplicate got ${answer.status}, not the replayed 201`);
  await answer.arrayBuffer();
  await firstAnswer;
  const { rows } = await database.query<{ completed: Date }>(
    `SELECT completed_at AS completed FROM idempotency_keys WHERE idem_key = $1`,
    [key],
  );
  return { latencyMs: answeredAt - rows[0]!.completed.getTime(), requests };
}

function percentile(sorted: number[], fraction: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil(fraction * sorted.length) - 1)]!;
}

function cell(value: string | number, index: number): string {
  return index === 0 ? String(value).padEnd(22) : String(value).padStart(8);
}

function sleep(ms: number) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
