/**
 * What exactly-once costs, measured on the built app over real HTTP, side
 * by side with the same checkout without a key:
 *
 *   npm run build && DATABASE_URL=postgresql://… npm run bench
 *
 * Scenarios, each run twice in one run, in the order A B C D E and then
 * E D C B A, so that drift over the run favours none:
 *   A  keyless: POST /api/lab/unsafe-orders, the lab's "no key" route (the
 *      same pricing, charge and order writing, no key layer)
 *   B  keyed, first time: POST /api/orders with a new key each
 *   C  keyed replay: POST /api/orders with one completed key
 *   D  50 identical requests in flight at once, round after round
 *   E  500 identical requests in flight at once, round after round
 * For A, B and C: a concurrent phase (CONCURRENCY shoppers; req/s, p50,
 * p99) and a sequential phase (one at a time; ms per request, and the WAL
 * flushes per request, which concurrent commits would share). For every
 * phase, PostgreSQL's own counts per request (bench/postgres-stats.ts):
 * transactions, rows written, WAL bytes. Then A, B, C and E alternating,
 * in short slices for throughput (E one round of 500) and A and B request
 * by request for latency, for the ratios the key layer is held to (drift on
 * this machine moves separate phases by more than the differences
 * measured). Last, the stored keys
 * (bench/stored-keys.ts): claim and replay at 10,000 and 1,000,000 keys,
 * and first-time checkouts while the reaper deletes them.
 *
 * Each reading of PostgreSQL's statistics waits 11 s for its backends to
 * report, so a full run takes a few minutes; `--quick` sends a fifth of the
 * requests. On PGlite (no DATABASE_URL) it refuses: every statement is
 * serialised there, and pg_stat_wal is not PostgreSQL's.
 */
import { randomUUID } from "node:crypto";
import { IDEMPOTENCY_KEY_HEADER, IDEMPOTENT_REPLAYED_HEADER } from "../lib/http/headers.ts";
import { startAppServer } from "../lib/testing/app-server.ts";
import { deltaOf, openStats, type StatsDelta } from "./postgres-stats.ts";
import { BENCH_APP_ENV } from "./shop-client.ts";
import {
  answers,
  measureStoredKeys,
  quantile,
  type Sample,
  type StoredKeysResult,
} from "./stored-keys.ts";

if (!process.env.DATABASE_URL) {
  console.error(
    "npm run bench needs DATABASE_URL (a PostgreSQL server): its figures come from PostgreSQL's own statistics.",
  );
  process.exit(2);
}
const QUICK = process.argv.includes("--quick");
const count = (n: number) => Math.max(20, Math.round(n * (QUICK ? 0.2 : 1)));
const CONCURRENCY = 16;
const CONCURRENT_REQUESTS = count(1600);
const SEQUENTIAL_REQUESTS = count(300);
// The alternating comparison: A and B in slices of this many, 16 at once;
// C in slices as long as E's round of 500, which a replay drains quickly.
const SLICE_REQUESTS = count(160);
const REPLAY_SLICE_REQUESTS = count(500);
const ALTERNATING_SLICES = 10;
// `--quick` seeds a tenth: the reaper then runs for seconds, not a minute.
const LARGE_TABLE = QUICK ? 100_000 : 1_000_000;
const STORM_ROUNDS = { 50: count(40), 500: Math.max(2, Math.round(count(40) / 8)) };

interface PhaseResult {
  samples: Sample[];
  seconds: number;
  stats: StatsDelta;
}

const app = await startAppServer({ env: BENCH_APP_ENV });
const stats = await openStats(app.databaseUrl);
try {
  const { token } = await createAccount(app.baseUrl);
  const keyless = () =>
    created(() => post(app.baseUrl, "/api/lab/unsafe-orders", token, null, cartBody()));
  const firstTime = () =>
    created(() => post(app.baseUrl, "/api/orders", token, randomUUID(), cartBody()));
  const doneKey = randomUUID();
  const doneBody = cartBody();
  const replay = () => created(() => post(app.baseUrl, "/api/orders", token, doneKey, doneBody));

  // Warm-up: compiles routes, fills the pools, completes the replayed key.
  await runConcurrently(60, 4, keyless);
  await runConcurrently(60, 4, firstTime);
  await replay();

  // The WAL flushes PostgreSQL makes with nothing to do (the WAL writer's own), per second.
  const idleStart = await stats.read();
  const idle = deltaOf(idleStart, await stats.read());
  const idleFlushesPerSecond = Math.max(0, idle.walFlushes) / idle.seconds;
  console.log(`idle: ${idle.walFlushes} WAL flushes in ${idle.seconds.toFixed(0)} s`);

  const results = new Map<string, { concurrent: PhaseResult[]; sequential: PhaseResult[] }>();
  const record = (name: string, kind: "concurrent" | "sequential", result: PhaseResult) => {
    const entry = results.get(name) ?? { concurrent: [], sequential: [] };
    entry[kind].push(result);
    results.set(name, entry);
  };
  const scenarios: { name: string; run(): Promise<void> }[] = [
    { name: "A keyless", run: () => requestScenario("A keyless", keyless) },
    { name: "B keyed, first time", run: () => requestScenario("B keyed, first time", firstTime) },
    { name: "C keyed replay", run: () => requestScenario("C keyed replay", replay) },
    { name: "D 50 in flight", run: () => stormScenario("D 50 in flight", 50) },
    { name: "E 500 in flight", run: () => stormScenario("E 500 in flight", 500) },
  ];

  async function requestScenario(name: string, one: () => Promise<Sample>) {
    record(
      name,
      "concurrent",
      await measured(() => runConcurrently(CONCURRENT_REQUESTS, CONCURRENCY, one)),
    );
    record(name, "sequential", await measured(() => runConcurrently(SEQUENTIAL_REQUESTS, 1, one)));
  }

  async function stormScenario(name: string, size: 50 | 500) {
    record(
      name,
      "concurrent",
      await measured(async () => {
        const samples: Sample[] = [];
        const started = performance.now();
        for (let round = 0; round < STORM_ROUNDS[size]; round += 1)
          samples.push(...(await stormRound(`${name}, round ${round}`, size)));
        return { samples, seconds: (performance.now() - started) / 1000 };
      }),
    );
  }

  /** `size` identical requests under a new key, all in flight at once: exactly one may create the order. */
  async function stormRound(name: string, size: number): Promise<Sample[]> {
    const key = randomUUID();
    const body = cartBody();
    const answers = await Promise.all(
      Array.from({ length: size }, () =>
        timed(() => post(app.baseUrl, "/api/orders", token, key, body)),
      ),
    );
    const created = answers.filter((answer) => answer.answer === "201").length;
    if (created !== 1) throw new Error(`${name}: ${created} answers created an order, not 1`);
    return answers;
  }

  // Phases follow each other with nothing in between, so one reading ends
  // a phase and begins the next (each reading waits 11 s).
  let lastReading = await stats.read();
  async function measured(
    run: () => Promise<{ samples: Sample[]; seconds: number }>,
  ): Promise<PhaseResult> {
    const before = lastReading;
    const result = await run();
    lastReading = await stats.read();
    return { ...result, stats: deltaOf(before, lastReading) };
  }

  console.log(
    `app: the built app on PostgreSQL, ${CONCURRENCY} shoppers in the concurrent phases; order A B C D E, then E D C B A`,
  );
  for (const scenario of [...scenarios, ...[...scenarios].reverse()]) {
    process.stdout.write(`  ${scenario.name}…`);
    await scenario.run();
    process.stdout.write(" done\n");
  }

  // A, B, C and E side by side once more, for the ratios between them:
  // throughput in short slices (A B C E, then E C B A, …; E one round of 500)
  // and A and B's latency request by request, so that whatever the machine
  // does meanwhile falls on all alike.
  process.stdout.write("  A, B, C and E alternating…");
  const slices = {
    keyless: () => runConcurrently(SLICE_REQUESTS, CONCURRENCY, keyless),
    firstTime: () => runConcurrently(SLICE_REQUESTS, CONCURRENCY, firstTime),
    replay: () => runConcurrently(REPLAY_SLICE_REQUESTS, CONCURRENCY, replay),
    storm: async () => {
      const started = performance.now();
      const samples = await stormRound("E 500 in flight, alternating", 500);
      return { samples, seconds: (performance.now() - started) / 1000 };
    },
  };
  type SliceName = keyof typeof slices;
  const inTurn: SliceName[] = ["keyless", "firstTime", "replay", "storm"];
  const paired = Object.fromEntries(
    inTurn.map((name) => [name, { samples: [] as Sample[], seconds: 0 }]),
  ) as Record<SliceName, { samples: Sample[]; seconds: number }>;
  for (let slice = 0; slice < ALTERNATING_SLICES; slice += 1) {
    for (const name of slice % 2 === 0 ? inTurn : [...inTurn].reverse()) {
      const { samples, seconds } = await slices[name]();
      paired[name].samples.push(...samples);
      paired[name].seconds += seconds;
    }
  }
  const oneAtATime = { keyless: [] as Sample[], firstTime: [] as Sample[] };
  for (let pair = 0; pair < SEQUENTIAL_REQUESTS; pair += 1) {
    oneAtATime.keyless.push(await keyless());
    oneAtATime.firstTime.push(await firstTime());
  }
  process.stdout.write(" done\n");

  const rateOf = (name: SliceName) => paired[name].samples.length / paired[name].seconds;
  printTable(results, idleFlushesPerSecond, {
    rate: {
      keyless: rateOf("keyless"),
      firstTime: rateOf("firstTime"),
      replay: rateOf("replay"),
      storm: rateOf("storm"),
    },
    oneAtATime,
  });

  console.log(
    `\nstored keys: ${LARGE_TABLE.toLocaleString("en")} seeded, then the reaper deletes them under load`,
  );
  const scale = await measureStoredKeys(
    {
      databaseUrl: app.databaseUrl,
      seedAccountId: (await createAccount(app.baseUrl)).id,
      firstTime,
      replay,
      runConcurrently,
      sequentialRequests: SEQUENTIAL_REQUESTS,
      concurrentRequests: CONCURRENT_REQUESTS,
      concurrency: CONCURRENCY,
      largeTable: LARGE_TABLE,
    },
    (line) => console.log(`  ${line}`),
  );
  printScaleRatios(scale);
} finally {
  await stats.close();
  await app.stop();
}

function printTable(
  results: Map<string, { concurrent: PhaseResult[]; sequential: PhaseResult[] }>,
  idleFlushesPerSecond: number,
  alternating: {
    rate: { keyless: number; firstTime: number; replay: number; storm: number };
    oneAtATime: { keyless: Sample[]; firstTime: Sample[] };
  },
) {
  const merged = (phases: PhaseResult[]) => ({
    samples: phases.flatMap((phase) => phase.samples),
    seconds: phases.reduce((sum, phase) => sum + phase.seconds, 0),
    stats: phases.reduce<StatsDelta>(
      (sum, phase) => ({
        transactions: sum.transactions + phase.stats.transactions,
        rowsWritten: sum.rowsWritten + phase.stats.rowsWritten,
        walBytes: sum.walBytes + phase.stats.walBytes,
        walFlushes: sum.walFlushes + phase.stats.walFlushes,
        seconds: sum.seconds + phase.stats.seconds,
      }),
      { transactions: 0, rowsWritten: 0, walBytes: 0, walFlushes: 0, seconds: 0 },
    ),
  });
  const header = [
    "scenario",
    "requests",
    "req/s",
    "p50 ms",
    "p99 ms",
    "tx/req",
    "rows/req",
    "WAL B/req",
    "seq ms",
    "flushes/req",
    "answers",
  ];
  console.log(
    `\n${header[0]!.padEnd(22)}${header
      .slice(1, -1)
      .map((cell) => cell.padStart(12))
      .join("")}  ${header.at(-1)}`,
  );
  const figures = new Map<string, { rate: number; sequentialMs: number; flushes: number }>();
  for (const [name, { concurrent, sequential }] of results) {
    const load = merged(concurrent);
    const perRequest = (value: number) => (value / load.samples.length).toFixed(1);
    const seq = sequential.length > 0 ? merged(sequential) : undefined;
    const sequentialMs = seq ? quantile(seq.samples, 0.5) : Number.NaN;
    const flushes = seq
      ? Math.max(0, seq.stats.walFlushes - idleFlushesPerSecond * seq.stats.seconds) /
        seq.samples.length
      : Number.NaN;
    const rate = load.samples.length / load.seconds;
    figures.set(name, { rate, sequentialMs, flushes });
    const cells = [
      String(load.samples.length),
      rate.toFixed(0),
      quantile(load.samples, 0.5).toFixed(1),
      quantile(load.samples, 0.99).toFixed(1),
      perRequest(load.stats.transactions),
      perRequest(load.stats.rowsWritten),
      (load.stats.walBytes / load.samples.length).toFixed(0),
      Number.isNaN(sequentialMs) ? "-" : sequentialMs.toFixed(1),
      Number.isNaN(flushes) ? "-" : flushes.toFixed(2),
    ];
    console.log(
      `${name.padEnd(22)}${cells.map((cell) => cell.padStart(12)).join("")}  ${answers(load.samples)}`,
    );
  }

  const of = (name: string) => figures.get(name)!;
  const keyless = of("A keyless");
  const firstTime = of("B keyed, first time");
  const replayed = of("C keyed replay");
  const storm = of("E 500 in flight");
  console.log("\nratios (target in brackets)");
  const { rate, oneAtATime } = alternating;
  console.log(
    `  keyed first-time req/s ÷ keyless, alternating: ${(rate.firstTime / rate.keyless).toFixed(2)}  [≥ 0.90]  (${rate.firstTime.toFixed(0)} ÷ ${rate.keyless.toFixed(0)} req/s; in their own phases ${(firstTime.rate / keyless.rate).toFixed(2)})`,
  );
  const ms = {
    keyless: quantile(oneAtATime.keyless, 0.5),
    firstTime: quantile(oneAtATime.firstTime, 0.5),
  };
  console.log(
    `  keyed first-time ms ÷ keyless, alternating:    ${(ms.firstTime / ms.keyless).toFixed(2)}  [≤ 1.15]  (p50 ${ms.firstTime.toFixed(1)} ÷ ${ms.keyless.toFixed(1)} ms; in their own phases ${(firstTime.sequentialMs / keyless.sequentialMs).toFixed(2)})`,
  );
  console.log(
    `  durable commits the key layer adds:            ${(firstTime.flushes - keyless.flushes).toFixed(2)}  [≤ 1]`,
  );
  console.log(
    `  replay req/s ÷ keyless, alternating:           ${(rate.replay / rate.keyless).toFixed(2)}  [≥ 3]  (${rate.replay.toFixed(0)} ÷ ${rate.keyless.toFixed(0)} req/s; in their own phases ${(replayed.rate / keyless.rate).toFixed(2)})`,
  );
  console.log(
    `  500 in flight, drain ÷ replay, alternating:    ${(rate.storm / rate.replay).toFixed(2)}  [≥ 0.9]  (${rate.storm.toFixed(0)} ÷ ${rate.replay.toFixed(0)} req/s; in their own phases ${(storm.rate / replayed.rate).toFixed(2)})`,
  );
}

function printScaleRatios({ small, large, reaper }: StoredKeysResult) {
  const keys = (n: number) => n.toLocaleString("en");
  console.log(
    `  claim p50 at ${keys(large.keys)} keys ÷ at ~${keys(small.keys)} (before and after):  ${(large.claimP50 / small.claimP50).toFixed(2)}  [≤ 1.3]`,
  );
  console.log(
    `  replay p50 at ${keys(large.keys)} keys ÷ at ~${keys(small.keys)} (before and after): ${(large.replayP50 / small.replayP50).toFixed(2)}  [≤ 1.3]`,
  );
  console.log(
    `  first-time p99 while reaping ÷ without:                       ${(reaper.reapingP99 / reaper.quietP99).toFixed(2)}  [≤ 2]  (${reaper.answers})`,
  );
}

async function runConcurrently(
  total: number,
  concurrency: number,
  one: () => Promise<Sample>,
): Promise<{ samples: Sample[]; seconds: number }> {
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
  return {
    answer: `${response.status}${replayed ? " replay" : ""}`,
    ms: performance.now() - started,
  };
}

/** A request that must create (or replay) an order: a refusal, far cheaper, would make the ratios compare nothing. */
async function created(send: () => Promise<Response>): Promise<Sample> {
  const sample = await timed(send);
  if (!sample.answer.startsWith("201"))
    throw new Error(`A checkout answered ${sample.answer}, not 201: the figures would be wrong`);
  return sample;
}

async function createAccount(baseUrl: string): Promise<{ id: string; token: string }> {
  const response = await fetch(`${baseUrl}/api/accounts`, { method: "POST" });
  if (response.status !== 201) throw new Error(`POST /api/accounts answered ${response.status}`);
  return (await response.json()) as { id: string; token: string };
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

function post(
  baseUrl: string,
  path: string,
  token: string,
  key: string | null,
  body: unknown,
): Promise<Response> {
  return fetch(`${baseUrl}${path}`, {
    method: "POST",
    headers: {
      Authorization: `Bearer ${token}`,
      "Content-Type": "application/json",
      ...(key !== null && { [IDEMPOTENCY_KEY_HEADER]: key }),
    },
    body: JSON.stringify(body),
  });
}
