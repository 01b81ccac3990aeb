import { chmod, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { startAppInstance, type AppInstance } from "@/lib/cluster/app-instance";
import { startHaproxy, type Balancer } from "@/lib/cluster/haproxy";
import { startPgBouncer, type PgBouncer } from "@/lib/cluster/pgbouncer";
import { migrate } from "@/lib/db/migrate";
import {
  LOCAL_SIMULATOR_SECRET_KEY,
  spawnPaymentSimulator,
  type SimulatorProcess,
} from "@/lib/payments/simulator/process";
import { freePort } from "@/lib/process/free-port";
import { waitUntil } from "@/lib/process/process-group";

/**
 * OncePay the way it is deployed, on one machine:
 *
 *   clients ─▶ HAProxy ─▶ app instance × N ─▶ PgBouncer (transaction mode) ─▶ PostgreSQL
 *                              │    └─────────── migrations ──────────────────▲
 *                              └─▶ payment simulator (shared) ────────────────┘
 *
 * `npm run cluster` (scripts/cluster.mts) starts it for people, the cluster
 * tests and the cluster benchmark start it for themselves.
 */
export interface Cluster {
  /** The balancer: where clients go. */
  readonly url: string;
  readonly balancer: Balancer;
  readonly pooler: PgBouncer;
  readonly instances: readonly AppInstance[];
  readonly simulator: SimulatorProcess;
  /** PostgreSQL itself. */
  readonly databaseUrl: string;
  /** Everything each part printed, by part ("balancer", "pooler", "app1", …), when output is kept. */
  output(part: string): string;
  stop(): Promise<void>;
}

export interface ClusterOptions {
  size: number;
  /** PostgreSQL itself; never the embedded database (the pooler needs a real server). */
  databaseUrl: string;
  /** The balancer's port; 0 picks a free one. */
  port: number;
  /** PgBouncer's server connections: what PostgreSQL sees of the whole cluster. */
  poolerPoolSize: number;
  /** Each instance's own pool (its connections to PgBouncer). */
  instancePoolMax: number;
  /** Set on every instance (lease, recovery interval, log level, limits). */
  instanceEnv?: Record<string, string>;
  /** What the shared payment simulator's admin API takes (lib/payments/simulator/admin-key.ts). */
  simulatorAdminKey: string;
  /**
   * Where the instances reach the payment simulator, given where it
   * listens: a test puts a link it can cut in between. Unset: the
   * simulator itself.
   */
  providerUrl?: (simulatorUrl: string) => Promise<string>;
  /** "inherit": to the terminal; "keep": in memory, for output(part). */
  output: "inherit" | "keep";
}

export async function startCluster(options: ClusterOptions): Promise<Cluster> {
  const workDir = await mkdtemp(path.join(tmpdir(), "oncepay-cluster-"));
  // Others may pass through (not list): PgBouncer runs as postgres and reads its configuration below.
  await chmod(workDir, 0o711);
  const kept = new Map<string, string[]>();
  const outputOf = (part: string) => {
    if (options.output === "inherit") return "inherit" as const;
    const chunks: string[] = [];
    kept.set(part, chunks);
    return (chunk: string) => void chunks.push(chunk);
  };
  const started: { stop(): Promise<void> }[] = [];
  const stopAll = async () => {
    for (const part of started.reverse()) await part.stop();
    started.length = 0;
  };

  try {
    // Once, straight to PostgreSQL, before anyone serves: the instances'
    // launchers then find nothing to do (and would wait on each other's
    // advisory lock if they did).
    await migrate(options.databaseUrl);

    const simulator = await spawnPaymentSimulator({
      databaseUrl: options.databaseUrl,
      port: await freePort(),
      apiKeys: [LOCAL_SIMULATOR_SECRET_KEY],
      adminKey: options.simulatorAdminKey,
    });
    started.push(simulator);
    const providerUrl = options.providerUrl
      ? await options.providerUrl(simulator.url)
      : simulator.url;

    const pooler = await startPgBouncer({
      databaseUrl: options.databaseUrl,
      port: await freePort(),
      poolSize: options.poolerPoolSize,
      workDir: path.join(workDir, "pgbouncer"),
      output: outputOf("pooler"),
    });
    started.push(pooler);

    const names = Array.from({ length: options.size }, (_, index) => `app${index + 1}`);
    const ports = await Promise.all(names.map(() => freePort()));
    const instances = await Promise.all(
      names.map((name, index) =>
        startAppInstance({
          name,
          port: ports[index]!,
          databaseUrl: pooler.url,
          directDatabaseUrl: options.databaseUrl,
          paymentSimulatorUrl: providerUrl,
          stripeSecretKey: LOCAL_SIMULATOR_SECRET_KEY,
          env: { DATABASE_POOL_MAX: String(options.instancePoolMax), ...options.instanceEnv },
          output: outputOf(name),
        }).then((instance) => {
          started.push(instance.process);
          return instance;
        }),
      ),
    );

    const balancer = await startHaproxy({
      port: options.port || (await freePort()),
      statsPort: await freePort(),
      instances,
      workDir: path.join(workDir, "haproxy"),
      output: outputOf("balancer"),
    });
    started.push(balancer);
    await waitForRotation(balancer);

    return {
      url: balancer.url,
      balancer,
      pooler,
      instances,
      simulator,
      databaseUrl: options.databaseUrl,
      output: (part) => (kept.get(part) ?? []).join(""),
      async stop() {
        await stopAll();
        await rm(workDir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await stopAll();
    await rm(workDir, { recursive: true, force: true });
    throw error;
  }
}

// HAProxy puts an instance in rotation after its first good check (rise):
// wait until the balancer itself serves, so the first client is not a 503.
async function waitForRotation(balancer: Balancer): Promise<void> {
  await waitUntil(async () => (await fetch(`${balancer.url}/api/ready`)).ok, {
    timeoutMs: 15_000,
    process: balancer.process,
    describe: () => `The balancer at ${balancer.url} put no instance in rotation`,
  });
}
