/**
 * How fast the checkout is, measured on the built app over real HTTP, the
 * way a shopper's browser reaches it:
 *
 *   npm run build && DATABASE_URL=postgresql://… npm run bench
 *
 * Each scenario prints its line as soon as it is done. On PGlite (no
 * DATABASE_URL) it runs too, but every statement is serialised there, so the
 * concurrent figures say nothing about PostgreSQL. BENCH_URL=http://… runs
 * it against an app that is already running (say, one under a profiler)
 * instead of starting one.
 *
 * A checkout here is the whole path of a first request: authenticate, claim
 * the key, price the cart, charge at the payment simulator through the Stripe
 * SDK (its own process, its own HTTP round trips), write the order, the
 * payment and the completed key in one transaction, answer.
 */
import { randomUUID } from "node:crypto";
import { IDEMPOTENCY_KEY_HEADER, IDEMPOTENT_REPLAYED_HEADER } from "../lib/http/headers.ts";
import { startAppServer } from "../lib/testing/app-server.ts";

const QUICK = process.argv.includes("--quick");
const SCALE = QUICK ? 0.2 : 1;
const count = (n: number) => Math.max(10, Math.round(n * SCALE));

interface Sample {
  /** The status, with " replay" when Idempotent-Replayed said so. */
  answer: string;
  ms: number;
}

const server = process.env.BENCH_URL
  ? { baseUrl: process.env.BENCH_URL, description: `the app at ${process.env.BENCH_URL}`, stop: async () => {} }
  : await startApp();
try {
  console.log(`app: ${server.description}`);
  console.log(`${"scenario".padEnd(44)} ${"requests".padStart(8)} ${"req/s".padStart(7)} ${"p50 ms".padStart(7)} ${"p95 ms".padStart(7)} ${"p99 ms".padStart(7)} ${"max ms".padStart(7)}  statuses`);
  const token = await createAccount(server.baseUrl);
  const checkout = (key: string, body = cartBody()) => timed(() => postOrder(server.baseUrl, token, key, body));

  // Warm-up: the first requests compile routes and fill the connection pools.
  await runConcurrently(20, 4, () => checkout(randomUUID()));

  report("new checkout, one at a time", await runConcurrently(count(300), 1, () => checkout(randomUUID())));
  report("new checkout, 8 shoppers at once", await runConcurrently(count(800), 8, () => checkout(randomUUID())));
  report("new checkout, 32 shoppers at once", await runConcurrently(count(1600), 32, () => checkout(randomUUID())));

  const doneKey = randomUUID();
  const doneBody = cartBody();
  await checkout(doneKey, doneBody);
  report("replay of a completed key, one at a time", await runConcurrently(count(500), 1, () => checkout(doneKey, doneBody)));
  report("replay of a completed key, 8 at once", await runConcurrently(count(2000), 8, () => checkout(doneKey, doneBody)));

  // The seed test's shape: 50 identical requests in flight at once, again and
  // again. Every round must end with exactly one 201 that is not a replay.
  const rounds = count(40);
  const roundMs: Sample[] = [];
  const statuses: Sample[] = [];
  for (let round = 0; round < rounds; round += 1) {
    const key = randomUUID();
    const body = cartBody();
    const started = performance.now();
    const answers = await Promise.all(Array.from({ length: 50 }, () => checkout(key, body)));
    roundMs.push({ answer: "round", ms: performance.now() - started });
    statuses.push(...answers);
    const created = answers.filter((a) => a.answer === "201").length;
    if (created !== 1) throw new Error(`round ${round}: ${created} answers created an order, not 1`);
  }
  report("50 identical in flight (per request)", { samples: statuses, seconds: roundMs.reduce((sum, r) => sum + r.ms, 0) / 1000 });
  report("50 identical in flight (whole round)", { samples: roundMs, seconds: roundMs.reduce((sum, r) => sum + r.ms, 0) / 1000 }, false);
} finally {
  await server.stop();
}

async function startApp() {
  // One client sending thousands a minute: the limiter runs on every
  // checkout, as in production, with a limit it never reaches.
  const app = await startAppServer({ env: { LOG_LEVEL: "info", CHECKOUT_RATE_LIMIT: "100000000" } });
  const database = app.realPostgres ? "PostgreSQL (DATABASE_URL)" : "embedded PGlite, where concurrent figures mean little";
  return { baseUrl: app.baseUrl, description: `the built app, started here, on ${database}`, stop: () => app.stop() };
}

async function runConcurrently(total: number, concurrency: number, one: () => Promise<Sample>): Promise<{ samples: Sample[]; seconds: number }> {
  const samples: Sample[] = [];
  let started = 0;
  const begin = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (started < total) {
        started += 1;
        samples.push(await one());
      }
    }),
  );
  return { samples, seconds: (performance.now() - begin) / 1000 };
}

async function timed(send: () => Promise<Response>): Promise<Sample> {
  const started = performance.now();
  const response = await send();
  await response.arrayBuffer(); // the answer counts once it has fully arrived
  const replayed = response.headers.get(IDEMPOTENT_REPLAYED_HEADER) === "true";
  return { answer: `${response.status}${replayed ? " replay" : ""}`, ms: performance.now() - started };
}

function report(name: string, { samples, seconds }: { samples: Sample[]; seconds: number }, withStatuses = true) {
  const sorted = samples.map((s) => s.ms).sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
  const byAnswer = new Map<string, number>();
  for (const s of samples) byAnswer.set(s.answer, (byAnswer.get(s.answer) ?? 0) + 1);
  const statusText = withStatuses ? [...byAnswer].sort(([a], [b]) => a.localeCompare(b)).map(([answer, n]) => `${n}×${answer}`).join(", ") : "";
  const cells = [samples.length.toString().padStart(8), (samples.length / seconds).toFixed(0).padStart(7), ...[0.5, 0.95, 0.99, 1].map((q) => at(q).toFixed(1).padStart(7))];
  console.log(`${name.padEnd(44)} ${cells.join(" ")}  ${statusText}`);
}

async function createAccount(baseUrl: string): Promise<string> {
  const response = await fetch(`${baseUrl}/api/accounts`, { method: "POST" });
  if (response.status !== 201) throw new Error(`POST /api/accounts answered ${response.status}`);
  return ((await response.json()) as { token: string }).token;
}

function cartBody() {
  return {
    cartId: `cart-${randomUUID()}`,
    items: [
      { sku: "mug-ceramic-350", quantity: 2 },
      { sku: "beans-house-250", quantity: 1 },
    ],
  };
}

function postOrder(baseUrl: string, token: string, key: string, body: unknown): Promise<Response> {
  return fetch(`${baseUrl}/api/orders`, {
    method: "POST",
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json", [IDEMPOTENCY_KEY_HEADER]: key },
    body: JSON.stringify(body),
  });
}
