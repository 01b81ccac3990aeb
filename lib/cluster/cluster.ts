import { randomBytes } from "node:crypto";
import { chmod, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { startAppInstance, type AppInstance } from "@/lib/cluster/app-instance";
import { startLeaderCheck } from "@/lib/cluster/leader-check";
import { startHaproxy, type Balancer } from "@/lib/cluster/haproxy";
import { startReplicatedPostgres, type ReplicatedPostgres } from "@/lib/cluster/patroni";
import { startPgBouncer, type PgBouncer } from "@/lib/cluster/pgbouncer";
import { makeLocalCertificate, type TlsCertificate } from "@/lib/cluster/tls-certificate";
import { ensureDatabase } from "@/lib/db/ensure-database";
import { migrate } from "@/lib/db/migrate";
import {
  LOCAL_SIMULATOR_SECRET_KEY,
  spawnPaymentSimulator,
  type SimulatorProcess,
} from "@/lib/payments/simulator/process";
import { freePort } from "@/lib/process/free-port";
import { sample } from "@/lib/observability/prometheus-text";
import { waitUntil } from "@/lib/process/process-group";

/**
 * OncePay the way it is deployed, on one machine:
 *
 *   clients ─▶ HAProxy ─▶ app instance × N ─▶ PgBouncer (transaction mode) ─▶ PostgreSQL
 *                              │    └─────────── migrations ──────────────────▲
 *                              └─▶ payment simulator (shared) ────────────────┘
 *
 * With `replicated`, the app's PostgreSQL is three nodes under Patroni, and
 * PgBouncer reaches whichever leads through HAProxy (lib/cluster/patroni.ts):
 *
 *   app instance × N ─▶ PgBouncer ─▶ HAProxy (the node etcd names leader) ─▶ the primary
 *
 * PgBouncer sits before the balancer rather than on each node: the
 * instances' connections to it live through a failover, and only its server
 * connections are made again, to the new primary. The payment simulator
 * keeps its ledger on the single server (`databaseUrl`): it stands for
 * Stripe, whose records do not fail over with ours.
 *
 * `npm run cluster` (scripts/cluster.mts) starts it for people, the cluster
 * tests and the cluster benchmark start it for themselves.
 */
export interface Cluster {
  /** The balancer: where clients go. */
  readonly url: string;
  /** The same, over HTTPS and HTTP/2, with a certificate made at start. */
  readonly tlsUrl: string;
  readonly certificate: TlsCertificate;
  readonly balancer: Balancer;
  readonly pooler: PgBouncer;
  readonly instances: readonly AppInstance[];
  readonly simulator: SimulatorProcess;
  /** The app's database, not through the pooler: PostgreSQL itself, or the current primary through the balancer. */
  readonly databaseUrl: string;
  /** The Patroni cluster, when the app's database is replicated. */
  readonly replicated?: ReplicatedPostgres;
  /** Everything each part printed, by part ("balancer", "pooler", "app1", …), when output is kept. */
  output(part: string): string;
  stop(): Promise<void>;
}

export interface ClusterOptions {
  size: number;
  /**
   * PostgreSQL itself; never the embedded database (the pooler needs a real
   * server). The app's database, unless `replicated`; the payment
   * simulator's always.
   */
  databaseUrl: string;
  /** The app's database on three PostgreSQL nodes under Patroni; `synchronous: false` is the broken variant. */
  replicated?: { synchronous: boolean };
  /** The balancer's port; 0 picks a free one. */
  port: number;
  /** The balancer's HTTPS port; unset or 0 picks a free one. */
  tlsPort?: number;
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
    // Each Patroni logs "no action" every loop (2 s): in a terminal it would bury the rest.
    if (options.output === "inherit" && part === "patroni")
      return (chunk: string) => void process.stdout.write(withoutRoutineLines(chunk));
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
    // The simulator's ledger (and, unless replicated, the app's tables) on a
    // server that may not have the database yet.
    await ensureDatabase(options.databaseUrl);
    const names = Array.from({ length: options.size }, (_, index) => `app${index + 1}`);
    const ports = await Promise.all(names.map(() => freePort()));

    const replicated =
      options.replicated &&
      (await startReplicatedPostgres({
        synchronous: options.replicated.synchronous,
        workDir: path.join(workDir, "patroni"),
        output: outputOf("patroni"),
      }));
    if (replicated) started.push(replicated);
    const leaderCheck =
      replicated && (await startLeaderCheck(replicated.nodes, () => replicated.leaderInDcs()));
    if (leaderCheck) started.push(leaderCheck);

    // First: in the replicated shape it is also the way to the database.
    const certificate = await makeLocalCertificate(workDir);
    const balancer = await startHaproxy({
      port: options.port || (await freePort()),
      tls: { port: options.tlsPort || (await freePort()), pemFile: certificate.pemFile },
      statsPort: await freePort(),
      instances: names.map((name, index) => ({ name, port: ports[index]! })),
      ...(replicated && {
        postgres: {
          port: await freePort(),
          nodes: replicated.nodes.map(({ name, pgPort }) => ({
            name,
            pgPort,
            checkPort: leaderCheck!.ports.get(name)!,
          })),
        },
      }),
      workDir: path.join(workDir, "haproxy"),
      output: outputOf("balancer"),
    });
    started.push(balancer);
    if (replicated) await waitForOnePrimary(balancer);
    const databaseUrl = replicated
      ? throughBalancer(replicated.nodes[0]!.url, balancer.postgresAddress!)
      : options.databaseUrl;

    // Once, straight to PostgreSQL, before anyone serves: the instances'
    // launchers then find nothing to do (and would wait on each other's
    // advisory lock if they did).
    await migrate(databaseUrl);

    // The provider's events come in through the balancer, as a shopper
    // does, signed with one secret every instance checks; and the bank's
    // 3-D Secure page sends shoppers back to the balancer, not an instance.
    const webhookSecret = `whsec_${randomBytes(24).toString("base64url")}`;
    const simulator = await spawnPaymentSimulator({
      databaseUrl: options.databaseUrl,
      port: await freePort(),
      apiKeys: [LOCAL_SIMULATOR_SECRET_KEY],
      adminKey: options.simulatorAdminKey,
      webhook: { url: `${balancer.url}/api/webhooks/stripe`, secret: webhookSecret },
    });
    started.push(simulator);
    const providerUrl = options.providerUrl
      ? await options.providerUrl(simulator.url)
      : simulator.url;

    const pooler = await startPgBouncer({
      databaseUrl,
      port: await freePort(),
      poolSize: options.poolerPoolSize,
      workDir: path.join(workDir, "pgbouncer"),
      output: outputOf("pooler"),
    });
    started.push(pooler);

    // All settled before going on: one that fails must not leave the
    // others starting after everything was stopped.
    const starts = await Promise.allSettled(
      names.map((name, index) =>
        startAppInstance({
          name,
          port: ports[index]!,
          databaseUrl: pooler.url,
          directDatabaseUrl: databaseUrl,
          paymentSimulatorUrl: providerUrl,
          stripeSecretKey: LOCAL_SIMULATOR_SECRET_KEY,
          env: {
            DATABASE_POOL_MAX: String(options.instancePoolMax),
            STRIPE_WEBHOOK_SECRET: webhookSecret,
            PUBLIC_URL: balancer.url,
            ...options.instanceEnv,
          },
          output: outputOf(name),
        }).then((instance) => {
          started.push(instance.process);
          return instance;
        }),
      ),
    );
    const instances = starts.map((start) => {
      if (start.status === "rejected") throw start.reason;
      return start.value;
    });
    await waitForRotation(balancer, instances.length);

    return {
      url: balancer.url,
      tlsUrl: balancer.tlsUrl!,
      certificate,
      balancer,
      pooler,
      instances,
      simulator,
      databaseUrl,
      ...(replicated && { replicated }),
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

function withoutRoutineLines(chunk: string): string {
  return chunk
    .split("\n")
    .filter((line) => !line.includes("INFO: no action."))
    .join("\n");
}

/** A node's URL (its user, password and database) with the balancer's address in place of the node's. */
function throughBalancer(nodeUrl: string, address: string): string {
  const url = new URL(nodeUrl);
  url.host = address;
  return url.toString();
}

// HAProxy counts a server up until its checks say otherwise: at start, all
// three nodes. Wait until only the primary is left, so the first connection
// does not land on a standby.
async function waitForOnePrimary(balancer: Balancer): Promise<void> {
  await waitUntil(
    async () => {
      const text = await (await fetch(`${balancer.statsUrl}/metrics`)).text();
      return sample(text, "haproxy_backend_active_servers", { proxy: "postgres" }) === 1;
    },
    {
      timeoutMs: 15_000,
      process: balancer.process,
      describe: () => "The balancer did not settle on one PostgreSQL primary",
    },
  );
}

// HAProxy puts an instance in rotation after its good checks (rise): wait
// until the balancer counts every instance active and serves, so the first
// client is not a 503 and the first storm is spread over all of them.
async function waitForRotation(balancer: Balancer, instanceCount: number): Promise<void> {
  await waitUntil(
    async () => {
      const text = await (await fetch(`${balancer.statsUrl}/metrics`)).text();
      const active = sample(text, "haproxy_backend_active_servers", { proxy: "instances" });
      return active === instanceCount && (await fetch(`${balancer.url}/api/ready`)).ok;
    },
    {
      timeoutMs: 15_000,
      process: balancer.process,
      describe: () =>
        `The balancer at ${balancer.url} did not put all ${instanceCount} instances in rotation`,
    },
  );
}
