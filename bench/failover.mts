/**
 * What replicating the app's PostgreSQL costs, and how long a failover
 * stops writes, on this machine:
 *
 *   npm run build && DATABASE_URL=postgresql://… npm run bench:failover
 *
 * Throughput: BENCH_SHOPPERS (16) shoppers at once through the balancer and
 * one app instance, for BENCH_SECONDS (15) each: first-time checkouts (a new
 * key each), then replays of the keys those made. Once on one PostgreSQL
 * server, once on three nodes under Patroni with a synchronous standby, and
 * on one server again, so that drift over the run does not favour either:
 * the ratios divide the replicated figure by the mean of the two single
 * ones. Targets: both ratios at least 0.85.
 *
 * Outage: on the replicated cluster, FAILOVER_KILLS (5) times, SIGKILL to
 * the primary (Patroni and PostgreSQL) and, from that moment, a new
 * checkout every 100 ms until one answers 201: the time from the kill to
 * that 201. The old primary then rejoins before the next kill. Target: the
 * median at most 15 s.
 */
import { randomUUID } from "node:crypto";
import { setTimeout as delay } from "node:timers/promises";
import pg from "pg";
import { startCluster, type Cluster } from "../lib/cluster/cluster.ts";
import { newAdminKey } from "../lib/payments/simulator/admin-key.ts";
import { createAccount, newCart, postOrder, type Checkout } from "./shop-client.ts";

const serverUrl = process.env.DATABASE_URL;
if (!serverUrl) {
  console.error(
    "bench:failover needs DATABASE_URL (a PostgreSQL server): the cluster's pooler and the replicated nodes cannot use the embedded database.",
  );
  process.exit(2);
}
const SECONDS = Number(process.env.BENCH_SECONDS ?? 15);
const SHOPPERS = Number(process.env.BENCH_SHOPPERS ?? 16);
const KILLS = Number(process.env.FAILOVER_KILLS ?? 5);
const PROBE_EVERY_MS = 100;

interface Throughput {
  firstTime: number;
  replay: number;
}

console.log(
  `${SHOPPERS} shoppers, ${SECONDS} s per measurement, one app instance behind the balancer`,
);
const single1 = await onFreshDatabase((url) => withCluster(url, false, throughput));
report("one PostgreSQL server", single1);
const { replicated, outages } = await onFreshDatabase((url) =>
  withCluster(url, true, async (cluster) => ({
    replicated: await throughput(cluster),
    outages: await killPrimaryRepeatedly(cluster),
  })),
);
report("Patroni, synchronous standby", replicated);
const single2 = await onFreshDatabase((url) => withCluster(url, false, throughput));
report("one PostgreSQL server, again", single2);

const ratio = (key: keyof Throughput) => replicated[key] / ((single1[key] + single2[key]) / 2);
console.log(
  `\nreplicated ÷ single: first-time ${ratio("firstTime").toFixed(2)}, replay ${ratio("replay").toFixed(2)} (target ≥ 0.85 each)`,
);
const sorted = [...outages].sort((a, b) => a - b);
console.log(
  `write outage, kill to first 201: ${outages.map((ms) => `${(ms / 1000).toFixed(1)} s`).join(", ")}; median ${(sorted[Math.floor(sorted.length / 2)]! / 1000).toFixed(1)} s (target ≤ 15 s)`,
);

function report(name: string, result: Throughput): void {
  console.log(
    `${name.padEnd(30)} first-time ${result.firstTime.toFixed(0).padStart(5)} /s   replay ${result.replay.toFixed(0).padStart(6)} /s`,
  );
}

/** A database of its own on the server, for the app (single) or the simulator (replicated), dropped after. */
async function onFreshDatabase<T>(run: (url: string) => Promise<T>): Promise<T> {
  const name = `oncepay_bench_${randomUUID().replaceAll("-", "")}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
    const url = new URL(serverUrl!);
    url.pathname = `/${name}`;
    try {
      return await run(url.toString());
    } finally {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    }
  } finally {
    await admin.end();
  }
}

async function withCluster<T>(
  databaseUrl: string,
  replicated: boolean,
  run: (cluster: Cluster) => Promise<T>,
): Promise<T> {
  const cluster = await startCluster({
    size: 1,
    databaseUrl,
    ...(replicated && { replicated: { synchronous: true } }),
    port: 0,
    poolerPoolSize: 20,
    instancePoolMax: 10,
    simulatorAdminKey: newAdminKey(),
    output: "keep",
    instanceEnv: { LOG_LEVEL: "warn", CHECKOUT_RATE_LIMIT: "100000000" },
  });
  try {
    return await run(cluster);
  } finally {
    await cluster.stop();
  }
}

async function throughput(cluster: Cluster): Promise<Throughput> {
  const tokens = await Promise.all(Array.from({ length: 8 }, () => createAccount(cluster.url)));
  const tokenOf = (shopper: number) => tokens[shopper % tokens.length]!;
  const newCheckout = (shopper: number) => ({
    token: tokenOf(shopper),
    key: randomUUID(),
    body: newCart(),
  });
  await runFor(2, (shopper) => statusOf(cluster.url, newCheckout(shopper))); // warm-up

  const made: Checkout[][] = Array.from({ length: SHOPPERS }, () => []);
  const firstTime = await runFor(SECONDS, async (shopper) => {
    const checkout = newCheckout(shopper);
    const status = await statusOf(cluster.url, checkout);
    if (status === 201) made[shopper]!.push(checkout);
    return status;
  });
  const replayed = made.map(() => 0);
  const replay = await runFor(SECONDS, (shopper) => {
    const mine = made[shopper]!;
    const checkout = mine[replayed[shopper]! % mine.length]!;
    replayed[shopper]! += 1;
    return statusOf(cluster.url, checkout);
  });
  return { firstTime, replay };
}

/** Answers 201 per second, over `seconds`, with every shopper sending one request after another. */
async function runFor(seconds: number, one: (shopper: number) => Promise<number>): Promise<number> {
  let answered201 = 0;
  const started = performance.now();
  const stopAt = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: SHOPPERS }, async (_, shopper) => {
      while (performance.now() < stopAt) {
        if ((await one(shopper).catch(() => 0)) === 201) answered201 += 1;
      }
    }),
  );
  return answered201 / ((performance.now() - started) / 1000);
}

async function killPrimaryRepeatedly(cluster: Cluster): Promise<number[]> {
  const replicated = cluster.replicated!;
  const token = await createAccount(cluster.url);
  const outages: number[] = [];
  for (let kill = 1; kill <= KILLS; kill++) {
    const primary = await replicated.leader();
    const killedAt = performance.now();
    await primary.kill();
    const outage = (await firstCreatedAfter(cluster, token)) - killedAt;
    outages.push(outage);
    console.log(
      `kill ${kill}: ${primary.name} killed, first 201 after ${(outage / 1000).toFixed(1)} s`,
    );
    await primary.start();
    await replicated.whole();
  }
  return outages;
}

/** Sends a new checkout every PROBE_EVERY_MS, each with its own key, until one answers 201: when it did. */
async function firstCreatedAfter(cluster: Cluster, token: string): Promise<number> {
  let createdAt: number | undefined;
  const probes: Promise<void>[] = [];
  while (createdAt === undefined) {
    probes.push(
      statusOf(cluster.url, { token, key: randomUUID(), body: newCart() })
        .catch(() => 0)
        .then((status) => {
          if (status === 201) createdAt ??= performance.now();
        }),
    );
    await delay(PROBE_EVERY_MS);
  }
  await Promise.all(probes);
  return createdAt;
}

/** The answer's status, its body read to the end (it throws when there is no answer). */
async function statusOf(baseUrl: string, checkout: Checkout): Promise<number> {
  const response = await postOrder(baseUrl, checkout);
  await response.arrayBuffer();
  return response.status;
}
