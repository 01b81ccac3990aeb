/**
 * What each key design costs per first-time checkout, in one run, on the
 * built app over real HTTP, sequentially (no group commit, no queueing):
 *
 *   npm run build && DATABASE_URL=postgresql://… npm run bench:keys [-- --quick]
 *
 * Every strategy of the lab is sent the same new checkout again and again
 * (a new key and cart each time), in two passes, forward and backward, so a
 * slow minute of the machine falls on all of them alike. Round trips are
 * counted outside the app, by proxies it is pointed at: PostgreSQL queries
 * answered (ReadyForQuery), DynamoDB API calls, Redis commands
 * (INFO's total_commands_processed) and calls to the payment provider.
 * "No key" is the floor: a checkout with no key layer at all. OncePay's
 * own checkout runs twice, once on each idempotency store (a second app
 * with IDEMPOTENCY_STORE=prisma), so the two stores' costs stand side by
 * side.
 */
import { randomUUID } from "node:crypto";
import { createClient } from "@redis/client";
import { IDEMPOTENCY_KEY_HEADER } from "../lib/http/headers.ts";
import { LAB_STRATEGIES, LAB_STRATEGY_INFO, type LabStrategy } from "../lib/lab/strategies.ts";
import { newAdminKey } from "../lib/payments/simulator/admin-key.ts";
import {
  LOCAL_SIMULATOR_SECRET_KEY,
  spawnPaymentSimulator,
} from "../lib/payments/simulator/process.ts";
import { spawnService } from "../lib/process/spawn-service.ts";
import { startAppServer } from "../lib/testing/app-server.ts";
import { countingHttpProxy, countingPostgresProxy } from "./counting-proxies.ts";

const QUICK = process.argv.includes("--quick");
const PER_STRATEGY = QUICK ? 40 : 200;
const WARM_UP = 10;

const databaseUrl = process.env.DATABASE_URL;
if (!databaseUrl) {
  console.error(
    "Set DATABASE_URL to a PostgreSQL database: on the embedded PGlite every statement waits for the one before, and the figures would say little.",
  );
  process.exit(2);
}

const postgres = await countingPostgresProxy(databaseUrl);
// The simulator talks to the database directly: its own queries are not the app's.
const simulator = await spawnPaymentSimulator({
  databaseUrl,
  port: 0,
  apiKeys: [LOCAL_SIMULATOR_SECRET_KEY],
  // The bench never calls the admin API; the simulator needs a key all the same.
  adminKey: newAdminKey(),
});
const provider = await countingHttpProxy(simulator.url);
const dynalite = await spawnService({
  name: "dynalite",
  script: "scripts/lab-dynamodb.mts",
  env: {},
  follows: process.pid,
});
const dynamodb = await countingHttpProxy(dynalite.url);
const redisServer = await spawnService({
  name: "redis-server",
  script: "scripts/lab-redis.mts",
  env: {},
  follows: process.pid,
});
const redis = createClient({ url: redisServer.url });
await redis.connect();

const appEnv = {
  DATABASE_URL: postgres.databaseUrl(databaseUrl),
  PAYMENT_SIMULATOR_URL: provider.url,
  STRIPE_SECRET_KEY: LOCAL_SIMULATOR_SECRET_KEY,
  LAB_DYNAMODB_ENDPOINT: dynamodb.url,
  LAB_REDIS_URL: redisServer.url,
  AWS_REGION: "local",
  AWS_ACCESS_KEY_ID: "local",
  AWS_SECRET_ACCESS_KEY: "local",
  LOG_LEVEL: "warn",
  // The lab's own per-account limit would count one more round trip per
  // lab request, which no copied design makes; the designs are measured bare.
  LAB_RATE_LIMIT: "0",
};
const app = await startAppServer({ env: { ...appEnv, IDEMPOTENCY_STORE: "sql" } });
const prismaApp = await startAppServer({ env: { ...appEnv, IDEMPOTENCY_STORE: "prisma" } });

/** A row of the table: a lab strategy on an app; OncePay's checkout once per store. */
interface Design {
  label: string;
  strategy: LabStrategy;
  baseUrl: string;
}
const DESIGNS: Design[] = LAB_STRATEGIES.flatMap((strategy): Design[] =>
  strategy === "atomic_claim"
    ? [
        { label: `${LAB_STRATEGY_INFO[strategy].name}, SQL store`, strategy, baseUrl: app.baseUrl },
        {
          label: `${LAB_STRATEGY_INFO[strategy].name}, Prisma store`,
          strategy,
          baseUrl: prismaApp.baseUrl,
        },
      ]
    : [{ label: LAB_STRATEGY_INFO[strategy].name, strategy, baseUrl: app.baseUrl }],
);

/** Commands Redis has processed, less the INFO that asks. */
async function redisCommands(): Promise<number> {
  const info = await redis.info("stats");
  return Number(/total_commands_processed:(\d+)/.exec(info)![1]) - 1;
}

interface Tally {
  ms: number[];
  postgres: number;
  keyStore: number;
  provider: number;
  failures: number;
}

try {
  const account = (await (
    await fetch(`${app.baseUrl}/api/accounts`, { method: "POST" })
  ).json()) as { token: string };
  const checkout = async ({ strategy, baseUrl }: Design) => {
    const info = LAB_STRATEGY_INFO[strategy];
    const headers: Record<string, string> = {
      Authorization: `Bearer ${account.token}`,
      "Content-Type": "application/json",
    };
    if (info.sendsKey) headers[IDEMPOTENCY_KEY_HEADER] = randomUUID();
    const started = performance.now();
    const response = await fetch(`${baseUrl}${info.endpoint}`, {
      method: "POST",
      headers,
      body: JSON.stringify({
        cartId: `cart_${randomUUID()}`,
        items: [{ sku: "mug-ceramic-350", quantity: 1 }],
        paymentMethod: "pm_card_visa",
      }),
    });
    await response.text();
    return { ms: performance.now() - started, ok: response.status === 201 };
  };

  // Every route compiled, every pool and key store connected, before anything counts.
  for (const design of DESIGNS) for (let i = 0; i < WARM_UP; i++) await checkout(design);

  const tallies = new Map<Design, Tally>(
    DESIGNS.map((design) => [
      design,
      { ms: [], postgres: 0, keyStore: 0, provider: 0, failures: 0 },
    ]),
  );
  for (const order of [DESIGNS, [...DESIGNS].reverse()]) {
    for (const design of order) {
      const tally = tallies.get(design)!;
      const before = {
        postgres: postgres.count(),
        dynamodb: dynamodb.count(),
        redis: await redisCommands(),
        provider: provider.count(),
      };
      for (let i = 0; i < PER_STRATEGY / 2; i++) {
        const result = await checkout(design);
        tally.ms.push(result.ms);
        if (!result.ok) tally.failures += 1;
      }
      tally.postgres += postgres.count() - before.postgres;
      tally.keyStore +=
        dynamodb.count() - before.dynamodb + ((await redisCommands()) - before.redis);
      tally.provider += provider.count() - before.provider;
    }
  }

  console.log(
    `${PER_STRATEGY} first-time checkouts per design, one at a time, PostgreSQL at ${new URL(databaseUrl).host}`,
  );
  console.log(
    `${"design".padEnd(38)} ${"p50 ms".padStart(7)} ${"mean ms".padStart(8)} ${"PostgreSQL".padStart(10)} ${"key store".padStart(9)} ${"provider".padStart(8)}  (round trips per checkout)`,
  );
  for (const [design, tally] of tallies) {
    const n = tally.ms.length;
    const sorted = [...tally.ms].sort((a, b) => a - b);
    const per = (total: number) => (total / n).toFixed(1);
    console.log(
      `${design.label.padEnd(38)} ${sorted[Math.floor(n / 2)]!.toFixed(1).padStart(7)} ${(tally.ms.reduce((a, b) => a + b, 0) / n).toFixed(1).padStart(8)} ${per(tally.postgres).padStart(10)} ${per(tally.keyStore).padStart(9)} ${per(tally.provider).padStart(8)}${tally.failures ? `  ${tally.failures} not 201` : ""}`,
    );
  }
} finally {
  await Promise.all([app.stop(), prismaApp.stop()]);
  await redis.quit();
  await Promise.all([
    simulator.stop(),
    dynalite.stop(),
    redisServer.stop(),
    provider.close(),
    dynamodb.close(),
    postgres.close(),
  ]);
}
