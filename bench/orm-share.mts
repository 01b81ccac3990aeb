/**
 * The two idempotency stores side by side, without HTTP or a provider: a
 * first-time checkout's database work (claim, payment_started, charged,
 * then the order with its items and payment and the completed key) and a
 * replay, through each store's own code: SqlIdempotencyStore (plain SQL on
 * the `pg` pool, one statement per step) and PrismaIdempotencyStore
 * (Prisma's queries and an interactive transaction), on the same pool.
 *
 *   DATABASE_URL=postgresql://… npm run bench:orm
 *
 * The charge's answer is made up: only what the app's process spends
 * talking to PostgreSQL. Each store runs a sequential phase (one checkout
 * at a time: ms each) and a concurrent one (16 at once: checkouts/s), in
 * the order P S S P, and the app-side CPU per checkout is read from
 * process.cpuUsage(). Then a replay, the one read.
 */
import { randomUUID } from "node:crypto";
import pg from "pg";
import { PrismaPg } from "@prisma/adapter-pg";
import { migrate } from "../lib/db/migrate.ts";
import { PrismaClient } from "../lib/generated/prisma/client.ts";
import { PrismaIdempotencyStore } from "../lib/idempotency/prisma-store.ts";
import { SqlIdempotencyStore } from "../lib/idempotency/sql-store.ts";
import type { IdempotencyStore } from "../lib/idempotency/store.ts";
import { parseCheckoutRequest, type PricedCart } from "../lib/orders/cart.ts";
import { paymentProviderKey } from "../lib/orders/provider-key.ts";
import { chargeWrite } from "../lib/orders/record.ts";
import type { ChargeResult } from "../lib/payments/provider.ts";

const databaseUrl = process.env.DATABASE_URL;
if (!databaseUrl) {
  console.error("npm run bench:orm needs DATABASE_URL (a PostgreSQL server).");
  process.exit(2);
}
const SEQUENTIAL = 300;
const CONCURRENT = 1600;
const CONCURRENCY = 16;
// One request shape throughout; a fingerprint as the app makes them (hex SHA-256).
const FINGERPRINT = "0".repeat(64);
const TIMINGS = { leaseSeconds: 30, ttlSeconds: 86_400 };

await migrate(databaseUrl);
const pool = new pg.Pool({ connectionString: databaseUrl, max: CONCURRENCY });
const prisma = new PrismaClient({ adapter: new PrismaPg(pool) });
type Variant = "Prisma" | "plain SQL";
const stores: Record<Variant, IdempotencyStore> = {
  Prisma: new PrismaIdempotencyStore(prisma, TIMINGS),
  "plain SQL": new SqlIdempotencyStore(pool, TIMINGS),
};
const { rows: accountRows } = await pool.query<{ id: string }>(
  `INSERT INTO accounts (token_hash, kind) VALUES ($1, 'api') RETURNING id`,
  [randomUUID()],
);
const accountId = accountRows[0]!.id;
const parsed = parseCheckoutRequest({
  cartId: "cart-orm-share",
  items: [
    { sku: "mug-ceramic-350", quantity: 2 },
    { sku: "beans-house-250", quantity: 1 },
  ],
});
if (!parsed.ok) throw new Error(parsed.detail);
const cart = parsed.body;

interface Phase {
  checkouts: number;
  seconds: number;
  cpuMs: number;
  latencies: number[];
}

const replayKey: Record<Variant, string> = { Prisma: randomUUID(), "plain SQL": randomUUID() };

/** A first-time checkout's database work, as the checkout asks it of a store. */
async function checkout(store: IdempotencyStore, key: string): Promise<void> {
  const claimed = await store.claimKey(claimRequest(key));
  if (claimed.kind !== "claimed") throw new Error(`a fresh key was not claimed: ${claimed.kind}`);
  const { claim } = claimed;
  const charge = madeUpCharge();
  await store.markPaymentStarted(claim, cart);
  await store.recordCharge(claim, charge);
  await store.completeKey(
    claim,
    chargeWrite({
      accountId,
      keyId: claim.keyId,
      idempotencyKey: key,
      source: "checkout",
      providerKey: paymentProviderKey(
        { accountId, idempotencyKey: key, fingerprint: FINGERPRINT },
        0,
      ),
      cart,
      charge,
      provider: "simulator",
    }),
  );
}

async function replay(store: IdempotencyStore, key: string): Promise<void> {
  const found = await store.claimKey(claimRequest(key));
  if (found.kind !== "replay") throw new Error(`expected a replay, got ${found.kind}`);
}

function claimRequest(key: string) {
  return {
    accountId,
    key,
    method: "POST",
    path: "/api/orders",
    fingerprint: FINGERPRINT,
    body: cart satisfies PricedCart,
  };
}

function madeUpCharge(): ChargeResult {
  return { status: "succeeded", providerPaymentId: `pi_${randomUUID().replaceAll("-", "")}` };
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

function printTable(results: Map<string, Phase[]>) {
  const summary = new Map<string, { rate: number; p50: number; cpuMs: number }>();
  console.log(
    `\n${"phase".padEnd(36)}${["n", "per s", "p50 ms", "CPU ms each"].map((cell) => cell.padStart(12)).join("")}`,
  );
  for (const [name, phases] of results) {
    const checkouts = phases.reduce((sum, phase) => sum + phase.checkouts, 0);
    const seconds = phases.reduce((sum, phase) => sum + phase.seconds, 0);
    const cpuMs = phases.reduce((sum, phase) => sum + phase.cpuMs, 0) / checkouts;
    const sorted = phases.flatMap((phase) => phase.latencies).sort((a, b) => a - b);
    const p50 = sorted[Math.floor(sorted.length / 2)]!;
    summary.set(name, { rate: checkouts / seconds, p50, cpuMs });
    console.log(
      `${name.padEnd(36)}${[String(checkouts), (checkouts / seconds).toFixed(0), p50.toFixed(2), cpuMs.toFixed(2)].map((cell) => cell.padStart(12)).join("")}`,
    );
  }
  console.log("\nPrismaIdempotencyStore ÷ SqlIdempotencyStore (what the ORM costs a checkout)");
  for (const phase of [
    "checkout, sequential",
    `checkout, ${CONCURRENCY} at once`,
    "replay, sequential",
  ]) {
    const prismaFigures = summary.get(`Prisma ${phase}`)!;
    const raw = summary.get(`plain SQL ${phase}`)!;
    console.log(
      `  ${phase.padEnd(28)} time ${(prismaFigures.p50 / raw.p50).toFixed(2)}×   throughput ${(raw.rate / prismaFigures.rate).toFixed(2)}×   app CPU ${(prismaFigures.cpuMs / raw.cpuMs).toFixed(2)}×`,
    );
  }
}

try {
  for (const variant of ["Prisma", "plain SQL"] as const) {
    await measure(40, 4, () => checkout(stores[variant], randomUUID())); // warm-up
    await checkout(stores[variant], replayKey[variant]);
  }
  const results = new Map<string, Phase[]>();
  const add = (name: string, phase: Phase) =>
    results.set(name, [...(results.get(name) ?? []), phase]);
  for (const variant of ["Prisma", "plain SQL", "plain SQL", "Prisma"] as const) {
    process.stdout.write(`  ${variant}…`);
    add(
      `${variant} checkout, sequential`,
      await measure(SEQUENTIAL, 1, () => checkout(stores[variant], randomUUID())),
    );
    add(
      `${variant} checkout, ${CONCURRENCY} at once`,
      await measure(CONCURRENT, CONCURRENCY, () => checkout(stores[variant], randomUUID())),
    );
    add(
      `${variant} replay, sequential`,
      await measure(SEQUENTIAL, 1, () => replay(stores[variant], replayKey[variant])),
    );
    process.stdout.write(" done\n");
  }
  printTable(results);
} finally {
  await prisma.$disconnect();
  await pool.end();
}
