/**
 * Checkout throughput and latency through the balancer, with one and with
 * three app instances, on this machine, and which process was busiest:
 *
 *   npm run build && DATABASE_URL=postgresql://… npm run bench:cluster
 *
 * Each size runs twice, in the order 1, 3, 3, 1, so that drift over the run
 * (a warming cache, another process) does not favour one. Every run is a
 * fresh cluster (lib/cluster/), the same N shoppers at once, each sending
 * new checkouts (a new key each) through HAProxy for BENCH_SECONDS (20).
 * CPU is read from /proc for each part, in % of one core: on 2 cores the
 * machine has 200 %.
 */
import { randomUUID } from "node:crypto";
import pg from "pg";
import { startCluster, type Cluster } from "../lib/cluster/cluster.ts";
import { newAdminKey } from "../lib/payments/simulator/admin-key.ts";
import { cpuSecondsBy, machineTicks, type ProcessGroup } from "./process-cpu.ts";
import { createAccount, newCart, postOrder } from "./shop-client.ts";
import { cpus } from "node:os";

const databaseUrl = process.env.DATABASE_URL;
if (!databaseUrl) {
  console.error(
    "bench:cluster needs DATABASE_URL (a PostgreSQL server): PgBouncer cannot sit in front of the embedded database.",
  );
  process.exit(2);
}
const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
const SHOPPERS = Number(process.env.BENCH_SHOPPERS ?? 32);
const SIZES = [1, 3, 3, 1];

console.log(
  `${SHOPPERS} shoppers at once, new checkouts through HAProxy, ${SECONDS} s per run; CPU in % of one core (2 cores here)`,
);
console.log(
  [
    "instances",
    "checkouts",
    "req/s",
    "p50 ms",
    "p95 ms",
    "p99 ms",
    "errors",
    "app",
    "postgres",
    "pgbouncer",
    "haproxy",
    "simulator",
    "load",
    "machine",
    "PG conns",
  ]
    .map((cell, index) => (index === 0 ? cell.padEnd(9) : cell.padStart(9)))
    .join(" "),
);
for (const size of SIZES) {
  const cluster = await startCluster({
    size,
    databaseUrl,
    port: 0,
    poolerPoolSize: 20,
    instancePoolMax: 10,
    simulatorAdminKey: newAdminKey(),
    output: "keep",
    instanceEnv: { LOG_LEVEL: "warn", CHECKOUT_RATE_LIMIT: "100000000" },
  });
  try {
    console.log(formatRow(size, await measure(cluster)));
  } finally {
    await cluster.stop();
  }
}

interface RunResult {
  latencies: number[];
  errors: number;
  seconds: number;
  cpu: Map<string, number>;
  serverConnections: number;
}

async function measure(cluster: Cluster): Promise<RunResult> {
  const tokens = await Promise.all(Array.from({ length: 8 }, () => createAccount(cluster.url)));
  const checkout = (shopper: number) =>
    postOrder(cluster.url, {
      token: tokens[shopper % tokens.length]!,
      key: randomUUID(),
      body: newCart(),
    });
  // Warm-up: compiles routes, fills every instance's pools.
  await runFor(2, SHOPPERS, checkout);

  const groups: ProcessGroup[] = [
    ...cluster.instances.map((instance) => ({
      name: `app:${instance.name}`,
      processGroup: instance.process.pid,
    })),
    { name: "postgres", comm: "postgres" },
    { name: "pgbouncer", processGroup: cluster.pooler.process.pid },
    { name: "haproxy", processGroup: cluster.balancer.process.pid },
    // Started by this process, in its process group: counted as its own tree.
    { name: "simulator", tree: cluster.simulator.pid },
  ];
  const before = await cpuSecondsBy(groups);
  const machineBefore = await machineTicks();
  const loadBefore = process.cpuUsage();
  const connections = watchServerConnections(databaseUrl!);

  const run = await runFor(SECONDS, SHOPPERS, checkout);

  const after = await cpuSecondsBy(groups);
  const machineAfter = await machineTicks();
  const cpu = new Map(
    [...after].map(([name, seconds]) => [name, seconds - (before.get(name) ?? 0)]),
  );
  // The machine's busy share, in seconds of one core, over the run.
  const machineShare =
    (machineAfter.busy - machineBefore.busy) / (machineAfter.total - machineBefore.total);
  cpu.set("machine", machineShare * cpus().length * run.seconds);
  const load = process.cpuUsage(loadBefore); // this process alone: the load generator
  cpu.set("load", (load.user + load.system) / 1e6);
  return { ...run, cpu, serverConnections: await connections.stop() };
}

/** The most connections PostgreSQL had to this database at once, sampled every 200 ms: what the pooler lets through. */
function watchServerConnections(url: string): { stop(): Promise<number> } {
  const client = new pg.Client({ connectionString: url });
  let most = 0;
  let running = true;
  const sampling = (async () => {
    await client.connect();
    while (running) {
      const { rows } = await client.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND application_name <> 'oncepay-payment-simulator'`,
      );
      most = Math.max(most, rows[0]!.n);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    await client.end();
  })();
  return {
    async stop() {
      running = false;
      await sampling;
      return most;
    },
  };
}

async function runFor(
  seconds: number,
  shoppers: number,
  one: (shopper: number) => Promise<Response>,
): Promise<{ latencies: number[]; errors: number; seconds: number }> {
  const latencies: number[] = [];
  let errors = 0;
  const started = performance.now();
  const stopAt = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: shoppers }, async (_, shopper) => {
      while (performance.now() < stopAt) {
        const sent = performance.now();
        try {
          const response = await one(shopper);
          await response.arrayBuffer();
          if (response.status === 201) latencies.push(performance.now() - sent);
          else errors += 1;
        } catch {
          errors += 1;
        }
      }
    }),
  );
  return { latencies, errors, seconds: (performance.now() - started) / 1000 };
}

function formatRow(size: number, result: RunResult): string {
  const sorted = [...result.latencies].sort((a, b) => a - b);
  const at = (q: number) =>
    sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
  const percent = (name: string) =>
    `${((100 * (result.cpu.get(name) ?? 0)) / result.seconds).toFixed(0)}%`;
  const appCpu = [...result.cpu]
    .filter(([name]) => name.startsWith("app:"))
    .reduce((sum, [, seconds]) => sum + seconds, 0);
  const cells = [
    String(size),
    String(result.latencies.length),
    (result.latencies.length / result.seconds).toFixed(0),
    at(0.5).toFixed(1),
    at(0.95).toFixed(1),
    at(0.99).toFixed(1),
    String(result.errors),
    `${((100 * appCpu) / result.seconds).toFixed(0)}%`,
    percent("postgres"),
    percent("pgbouncer"),
    percent("haproxy"),
    percent("simulator"),
    percent("load"),
    percent("machine"),
    String(result.serverConnections),
  ];
  return cells.map((cell, index) => (index === 0 ? cell.padEnd(9) : cell.padStart(9))).join(" ");
}
