/**
 * The engine package's two key stores side by side, without HTTP: the
 * real checkout operation (lib/orders/checkout.ts) run through the shop's
 * engine (shopEngine), its made-up provider answering at once. A
 * first-time checkout's database work (the claim, the three phases:
 * `claimed` moves to `payment_started`, the charge's answer is kept at
 * `charged`, then the order with its items and payment and the completed
 * key in one commit) and a replay, on each store: pgStore with sqlOrderRows
 * (plain SQL on the `pg` pool, prepared, as the app runs it unless it sits
 * behind PgBouncer; one statement a step, the order's rows one more) and
 * prismaStore with prismaOrderRows (the same key statements through
 * `$queryRawUnsafe`, Prisma's interactive transaction, the order by its
 * models' findUnique and nested create), on the same pool, both with
 * their statements prepared, as the app runs them; and, to show where
 * Prisma's time goes, prismaStore writing the order with the SQL store's
 * one statement through `tx.$queryRaw`.
 *
 *   DATABASE_URL=postgresql://… npm run bench:orm
 *
 * The charge is made up (a provider object that answers a success, with a
 * new payment id each time, and sends nothing): only what the app's
 * process spends with PostgreSQL, and the engine's own work (parsing and
 * pricing the body, its fingerprint), the same for all. Each variant runs a
 * sequential phase (one checkout at a time: ms each) and a concurrent one
 * (16 at once: checkouts/s), in the order P R S S R P, and the app-side CPU per
 * checkout is read from process.cpuUsage(). Then a replay, the one read.
 * Last, each store's PostgreSQL round trips per checkout and per replay,
 * counted on a pool of its own through a proxy that counts the server's
 * ReadyForQuery messages (bench/counting-proxies.ts), untimed.
 */
import { randomUUID } from "node:crypto";
import { createRequire } from "node:module";
import pg from "pg";
import type { KeyedCall } from "@oncepay/idempotency";
import type * as PgEntry from "@oncepay/idempotency/pg";
import type * as PrismaEntry from "@oncepay/idempotency/prisma";
import { prismaAdapter } from "../lib/db/client.ts";
import { migrate } from "../lib/db/migrate.ts";
import { PrismaClient, type Prisma } from "../lib/generated/prisma/client.ts";
import { shopEngine, type ShopEngine } from "../lib/idempotency/shop-engine.ts";
import { prismaOrderRows, sqlOrderRows, type OrderRowsWriter } from "../lib/orders/order-rows.ts";
import { orderRowsUnlessRecordedStatement } from "../lib/orders/order-rows-sql.ts";
import type { PaymentProvider, RefundProvider } from "../lib/payments/provider.ts";
import { pgStatements, prismaStatements } from "../lib/refunds/refund-rows.ts";
import { countingPostgresProxy } from "./counting-proxies.ts";

// Under tsx the shop's .ts files are CommonJS (package.json has no "type":
// "module"), so they load the engine package with a require. The stores
// are required too, so that the engine and its stores are one copy of the
// package, as in the app (its errors are told apart with instanceof).
const requireCommonJs = createRequire(import.meta.url);
const { pgStore } = requireCommonJs("@oncepay/idempotency/pg") as typeof PgEntry;
const { prismaStore } = requireCommonJs("@oncepay/idempotency/prisma") as typeof PrismaEntry;

const databaseUrl = process.env.DATABASE_URL;
if (!databaseUrl) {
  console.error("npm run bench:orm needs DATABASE_URL (a PostgreSQL server).");
  process.exit(2);
}
const SEQUENTIAL = 300;
const CONCURRENT = 1600;
const CONCURRENCY = 16;
/** Checkouts (and replays) whose round trips are counted, per store. */
const COUNTED = 50;
const TIMINGS = { leaseSeconds: 30, ttlSeconds: 86_400 };
// One request shape throughout, as a client sends it.
const BODY = {
  cartId: "cart-orm-share",
  items: [
    { sku: "mug-ceramic-350", quantity: 2 },
    { sku: "beans-house-250", quantity: 1 },
  ],
};

/** Answers every charge with a success, a new payment each time, without a word to anyone (and makes no refunds: none are measured). */
const provider: PaymentProvider & RefundProvider = {
  name: "made-up",
  charge: async () => ({
    status: "succeeded",
    providerPaymentId: `pi_${randomUUID().replaceAll("-", "")}`,
  }),
  refund: () => Promise.reject(new Error("The benchmark makes no refunds")),
};

/**
 * The two stores as the app runs them, and a third that shows where the
 * Prisma store's time goes: the same store, the order written with the
 * SQL store's one statement through `tx.$queryRaw` instead of the models.
 */
const VARIANTS = ["prismaStore", "prismaStore, raw order", "pgStore"] as const;
type Variant = (typeof VARIANTS)[number];

/** The order's rows by the SQL store's one statement, in Prisma's transaction. */
const rawOrderRows: OrderRowsWriter<Prisma.TransactionClient> = {
  async writeUnlessRecorded(tx, rows) {
    const [result] = await tx.$queryRaw<{ written: boolean }[]>(
      orderRowsUnlessRecordedStatement(rows),
    );
    return result?.written === true;
  },
};

/** Both stores' engines on one pool (and the Prisma client over it). */
function enginesOn(pool: pg.Pool) {
  // As the app makes it: statements prepared (lib/db/client.ts).
  const prisma = new PrismaClient({ adapter: prismaAdapter(pool, "prepared") });
  const engines: Record<Variant, ShopEngine> = {
    prismaStore: shopEngine({
      store: prismaStore(prisma, TIMINGS),
      orderRows: prismaOrderRows,
      statements: prismaStatements,
      provider,
    }),
    "prismaStore, raw order": shopEngine({
      store: prismaStore(prisma, TIMINGS),
      orderRows: rawOrderRows,
      statements: prismaStatements,
      provider,
    }),
    pgStore: shopEngine({
      store: pgStore(pool, { ...TIMINGS, statements: "prepared" }),
      orderRows: sqlOrderRows,
      statements: pgStatements,
      provider,
    }),
  };
  return { prisma, engines };
}

await migrate(databaseUrl);
const pool = new pg.Pool({ connectionString: databaseUrl, max: CONCURRENCY });
const { prisma, engines } = enginesOn(pool);
const { rows: accountRows } = await pool.query<{ id: string }>(
  `INSERT INTO accounts (token_hash, kind) VALUES ($1, 'api') RETURNING id`,
  [randomUUID()],
);
const accountId = accountRows[0]!.id;

interface Phase {
  checkouts: number;
  seconds: number;
  cpuMs: number;
  latencies: number[];
}

const replayKey = Object.fromEntries(VARIANTS.map((variant) => [variant, randomUUID()])) as Record<
  Variant,
  string
>;

function call(key: string): KeyedCall {
  return { scope: accountId, key, method: "POST", path: "/api/orders", body: BODY };
}

/** A first-time checkout, as POST /api/orders runs it under a new key. */
async function checkout(engine: ShopEngine, key: string): Promise<void> {
  const outcome = await engine.checkout(call(key));
  if (outcome.kind !== "completed" || outcome.stored.status !== 201)
    throw new Error(`a new key's checkout did not complete with its order: ${outcome.kind}`);
}

async function replay(engine: ShopEngine, key: string): Promise<void> {
  const outcome = await engine.checkout(call(key));
  if (outcome.kind !== "replay") throw new Error(`expected a replay, got ${outcome.kind}`);
}

async function measure(
  total: number,
  concurrency: number,
  one: () => Promise<void>,
): Promise<Phase> {
  const latencies: number[] = [];
  let started = 0;
  const cpuBefore = process.cpuUsage();
  const begin = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (started < total) {
        started += 1;
        const at = performance.now();
        await one();
        latencies.push(performance.now() - at);
      }
    }),
  );
  const cpu = process.cpuUsage(cpuBefore);
  return {
    checkouts: total,
    seconds: (performance.now() - begin) / 1000,
    cpuMs: (cpu.user + cpu.system) / 1000,
    latencies,
  };
}

/** Each store's round trips per checkout and per replay, on a pool of its own through a counting proxy. */
async function countRoundTrips(): Promise<Record<Variant, { checkout: number; replay: number }>> {
  const proxy = await countingPostgresProxy(databaseUrl!);
  const counted = new pg.Pool({ connectionString: proxy.databaseUrl(databaseUrl!), max: 1 });
  const { prisma: countedPrisma, engines: countedEngines } = enginesOn(counted);
  const perRun = async (runs: () => Promise<void>) => {
    const before = proxy.count();
    await runs();
    return (proxy.count() - before) / COUNTED;
  };
  try {
    const trips = {} as Record<Variant, { checkout: number; replay: number }>;
    for (const variant of VARIANTS) {
      const engine = countedEngines[variant];
      // Warm: the connection open, the statements prepared, Prisma's engine started.
      for (let i = 0; i < 5; i++) await checkout(engine, randomUUID());
      trips[variant] = {
        checkout: await perRun(async () => {
          for (let i = 0; i < COUNTED; i++) await checkout(engine, randomUUID());
        }),
        replay: await perRun(async () => {
          for (let i = 0; i < COUNTED; i++) await replay(engine, replayKey[variant]);
        }),
      };
    }
    return trips;
  } finally {
    await countedPrisma.$disconnect();
    await counted.end();
    await proxy.close();
  }
}

function printTable(
  results: Map<string, Phase[]>,
  trips: Record<Variant, { checkout: number; replay: number }>,
) {
  const summary = new Map<string, { rate: number; p50: number; cpuMs: number }>();
  console.log(
    `\n${"phase".padEnd(44)}${["n", "per s", "p50 ms", "CPU ms each"].map((cell) => cell.padStart(12)).join("")}`,
  );
  for (const [name, phases] of results) {
    const checkouts = phases.reduce((sum, phase) => sum + phase.checkouts, 0);
    const seconds = phases.reduce((sum, phase) => sum + phase.seconds, 0);
    const cpuMs = phases.reduce((sum, phase) => sum + phase.cpuMs, 0) / checkouts;
    const sorted = phases.flatMap((phase) => phase.latencies).sort((a, b) => a - b);
    const p50 = sorted[Math.floor(sorted.length / 2)]!;
    summary.set(name, { rate: checkouts / seconds, p50, cpuMs });
    console.log(
      `${name.padEnd(44)}${[String(checkouts), (checkouts / seconds).toFixed(0), p50.toFixed(2), cpuMs.toFixed(2)].map((cell) => cell.padStart(12)).join("")}`,
    );
  }
  console.log("\nPostgreSQL round trips (counted at a proxy)");
  for (const variant of VARIANTS)
    console.log(
      `  ${variant.padEnd(28)} checkout ${trips[variant].checkout.toFixed(1)}   replay ${trips[variant].replay.toFixed(1)}`,
    );
  for (const variant of VARIANTS.filter((name) => name !== "pgStore")) {
    console.log(`\n${variant} ÷ pgStore (what Prisma costs a checkout)`);
    for (const phase of [
      "checkout, sequential",
      `checkout, ${CONCURRENCY} at once`,
      "replay, sequential",
    ]) {
      const prismaFigures = summary.get(`${variant} ${phase}`)!;
      const raw = summary.get(`pgStore ${phase}`)!;
      console.log(
        `  ${phase.padEnd(28)} time ${(prismaFigures.p50 / raw.p50).toFixed(2)}×   throughput ${(raw.rate / prismaFigures.rate).toFixed(2)}×   app CPU ${(prismaFigures.cpuMs / raw.cpuMs).toFixed(2)}×`,
      );
    }
  }
}

try {
  for (const variant of VARIANTS) {
    await measure(40, 4, () => checkout(engines[variant], randomUUID())); // warm-up
    await checkout(engines[variant], replayKey[variant]);
  }
  const results = new Map<string, Phase[]>();
  const add = (name: string, phase: Phase) =>
    results.set(name, [...(results.get(name) ?? []), phase]);
  for (const variant of [...VARIANTS, ...[...VARIANTS].reverse()]) {
    process.stdout.write(`  ${variant}…`);
    add(
      `${variant} checkout, sequential`,
      await measure(SEQUENTIAL, 1, () => checkout(engines[variant], randomUUID())),
    );
    add(
      `${variant} checkout, ${CONCURRENCY} at once`,
      await measure(CONCURRENT, CONCURRENCY, () => checkout(engines[variant], randomUUID())),
    );
    add(
      `${variant} replay, sequential`,
      await measure(SEQUENTIAL, 1, () => replay(engines[variant], replayKey[variant])),
    );
    process.stdout.write(" done\n");
  }
  printTable(results, await countRoundTrips());
} finally {
  await prisma.$disconnect();
  await pool.end();
}
