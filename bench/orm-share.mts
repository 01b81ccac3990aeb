/**
 * The ORM's share of a checkout's database work: the same checkout's
 * writes (look up the key and claim it, payment_started, charged, then the
 * order with its items and payment and the completed key) as the app sends
 * them, plain SQL on the `pg` pool that Prisma's adapter holds
 * (lib/idempotency/postgres-store.ts, lib/orders/record.ts; the last of them
 * one statement), and through Prisma as the app sent them before (the same
 * SQL through $queryRawUnsafe, the order through the ORM's nested create,
 * in Prisma's interactive transaction with the key's UPDATE):
 *
 *   DATABASE_URL=postgresql://… npm run bench:orm
 *
 * No HTTP and no provider (the charge's answer is made up): only what the
 * app's process spends talking to PostgreSQL. Each variant runs a
 * sequential phase (one checkout at a time: ms each) and a concurrent one
 * (16 at once: checkouts/s), in the order P S S P, and the app-side CPU per
 * checkout is read from process.cpuUsage(). Then a replay, the one read.
 */
import { randomUUID } from "node:crypto";
import pg from "pg";
import { PrismaPg } from "@prisma/adapter-pg";
import { migrate } from "../lib/db/migrate.ts";
import { PrismaClient } from "../lib/generated/prisma/client.ts";
import { PostgresIdempotencyStore } from "../lib/idempotency/postgres-store.ts";
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
const store = new PostgresIdempotencyStore(pool, TIMINGS);
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

type Variant = "Prisma" | "plain SQL";
interface Phase {
  checkouts: number;
  seconds: number;
  cpuMs: number;
  latencies: number[];
}

const checkout: Record<Variant, (key: string) => Promise<void>> = {
  Prisma: checkoutThroughPrisma,
  "plain SQL": checkoutAsTheAppDoes,
};
const replayKey: Record<Variant, string> = { Prisma: randomUUID(), "plain SQL": randomUUID() };
const replay: Record<Variant, () => Promise<void>> = {
  Prisma: async () => {
    const rows = await prisma.$queryRawUnsafe<{ existing: { state: string } | null }[]>(
      LOOK_UP_OR_CLAIM,
      accountId,
      replayKey.Prisma,
      JSON.stringify(cart),
      randomUUID(),
    );
    if (rows[0]?.existing?.state !== "complete") throw new Error("expected a completed key");
  },
  "plain SQL": async () => {
    const found = await store.lookUpOrClaim(claimRequest(replayKey["plain SQL"]));
    if (found.kind !== "replay") throw new Error(`expected a replay, got ${found.kind}`);
  },
};

/** The app's code, as it runs in a checkout: plain SQL on the pool. */
async function checkoutAsTheAppDoes(key: string): Promise<void> {
  const request = claimRequest(key);
  const claimed = await store.lookUpOrClaim(request);
  if (claimed.kind !== "claimed") throw new Error(`a fresh key was not claimed: ${claimed.kind}`);
  const { claim } = claimed;
  const charge = madeUpCharge();
  await store.markSideEffectStarted(claim, cart);
  await store.recordSideEffectResult(claim, charge);
  await store.completeKey(
    claim,
    chargeWrite({
      accountId,
      keyId: claim.keyId,
      idempotencyKey: key,
      source: "checkout",
      providerKey: paymentProviderKey(accountId, claim.keyId),
      cart,
      charge,
      provider: "simulator",
    }),
  );
}

// The store's statements, as it sends them.
const LOOK_UP_OR_CLAIM = `WITH existing AS (
    SELECT id, fingerprint, state::text AS state, response_status, response_headers, response_body
      FROM idempotency_keys WHERE account_id = $1::uuid AND idem_key = $2
  ), claimed AS (
    INSERT INTO idempotency_keys
      (account_id, idem_key, request_method, request_path, fingerprint, request_body, lease_owner, lease_expires_at, expires_at)
    SELECT $1::uuid, $2, 'POST', '/api/orders', '${FINGERPRINT}', $3::jsonb, $4::uuid, now() + make_interval(secs => 30), now() + make_interval(secs => 86400)
     WHERE NOT EXISTS (SELECT FROM existing) AND set_config('synchronous_commit', 'off', true) = 'off'
    ON CONFLICT (account_id, idem_key) DO NOTHING RETURNING id
  )
  SELECT (SELECT id FROM claimed) AS claimed_id, (SELECT to_jsonb(existing) FROM existing) AS existing`;
const PAYMENT_STARTED = `UPDATE idempotency_keys
    SET recovery_point = 'payment_started', side_effect_request = $1::jsonb, payment_started_at = now(),
        lease_expires_at = now() + make_interval(secs => 30)
  WHERE id = $2::uuid AND lease_owner = $3::uuid AND state = 'in_flight' RETURNING payment_started_at`;
const CHARGED = `UPDATE idempotency_keys SET recovery_point = 'charged', side_effect_result = $1::jsonb, charged_at = now()
  WHERE id = $2::uuid AND lease_owner = $3::uuid AND state = 'in_flight' AND set_config('synchronous_commit', 'off', true) = 'off'`;
const COMPLETE = `UPDATE idempotency_keys
    SET state = 'complete', recovery_point = 'finished', response_status = 201, response_headers = $1::jsonb, response_body = $2::jsonb,
        completed_at = clock_timestamp(), lease_owner = NULL, lease_expires_at = NULL
  WHERE id = $3::uuid AND lease_owner = $4::uuid AND state = 'in_flight'`;

/** The same checkout through Prisma, as the app sent it before it moved the hot path to SQL. */
async function checkoutThroughPrisma(key: string): Promise<void> {
  const leaseOwner = randomUUID();
  const claimed = await prisma.$queryRawUnsafe<{ claimed_id: string | null }[]>(
    LOOK_UP_OR_CLAIM,
    accountId,
    key,
    JSON.stringify(cart),
    leaseOwner,
  );
  const keyId = claimed[0]?.claimed_id;
  if (!keyId) throw new Error("a fresh key was not claimed");
  const charge = madeUpCharge();
  if (
    (
      await prisma.$queryRawUnsafe<unknown[]>(
        PAYMENT_STARTED,
        JSON.stringify(cart),
        keyId,
        leaseOwner,
      )
    ).length !== 1
  )
    throw new Error("lease lost");
  if ((await prisma.$executeRawUnsafe(CHARGED, JSON.stringify(charge), keyId, leaseOwner)) !== 1)
    throw new Error("lease lost");
  await prisma.$transaction(async (tx) => {
    const order = await tx.order.create({
      data: {
        accountId,
        idempotencyKeyId: keyId,
        idemKey: key,
        source: "checkout",
        cartId: cart.cartId,
        status: "paid",
        currency: cart.currency,
        totalAmount: cart.total,
        items: {
          create: cart.lines.map((line) => ({
            sku: line.product.sku,
            name: line.product.name,
            unitAmount: line.product.unitAmount,
            quantity: line.quantity,
          })),
        },
        payment: {
          create: {
            accountId,
            idempotencyKeyId: keyId,
            provider: "simulator",
            providerPaymentId: charge.providerPaymentId,
            providerKey: paymentProviderKey(accountId, keyId),
            paymentMethod: cart.paymentMethod,
            status: "succeeded",
            amount: cart.total,
            currency: cart.currency,
          },
        },
      },
      include: { items: true, payment: true },
    });
    const completed = await tx.$executeRawUnsafe(
      COMPLETE,
      JSON.stringify({ "Content-Type": "application/json" }),
      JSON.stringify(order),
      keyId,
      leaseOwner,
    );
    if (completed !== 1) throw new Error("lease lost");
  });
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
  console.log("\nPrisma ÷ plain SQL (the ORM's cost; over 1.5 means move the hot path to SQL)");
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

// Last, so that the statements above are defined before the first checkout.
try {
  for (const variant of ["Prisma", "plain SQL"] as const) {
    await measure(40, 4, () => checkout[variant](randomUUID())); // warm-up
    await checkout[variant](replayKey[variant]);
  }
  const results = new Map<string, Phase[]>();
  const add = (name: string, phase: Phase) =>
    results.set(name, [...(results.get(name) ?? []), phase]);
  for (const variant of ["Prisma", "plain SQL", "plain SQL", "Prisma"] as const) {
    process.stdout.write(`  ${variant}…`);
    add(
      `${variant} checkout, sequential`,
      await measure(SEQUENTIAL, 1, () => checkout[variant](randomUUID())),
    );
    add(
      `${variant} checkout, ${CONCURRENCY} at once`,
      await measure(CONCURRENT, CONCURRENCY, () => checkout[variant](randomUUID())),
    );
    add(`${variant} replay, sequential`, await measure(SEQUENTIAL, 1, replay[variant]));
    process.stdout.write(" done\n");
  }
  printTable(results);
} finally {
  await prisma.$disconnect();
  await pool.end();
}
