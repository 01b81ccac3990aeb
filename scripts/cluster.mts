/**
 * `npm run cluster`: OncePay as it is deployed, on this machine. CLUSTER_SIZE
 * app instances (3) behind HAProxy, PgBouncer in transaction mode between
 * them and PostgreSQL, one payment simulator they share (lib/cluster/).
 * Needs DATABASE_URL (a PostgreSQL server; the database is created when the
 * server does not have it). With CLUSTER_DATABASE=patroni
 * the app's PostgreSQL is three nodes under Patroni, and DATABASE_URL keeps
 * only the payment simulator's ledger. Ctrl-C stops everything.
 */
import { spawnSync } from "node:child_process";
import { keptSecret } from "../lib/auth/kept-secret.ts";
import { startCluster } from "../lib/cluster/cluster.ts";
import { ensureDatabaseAtStart } from "../lib/db/ensure-database-at-start.ts";
import { clusterEnv } from "../lib/env.ts";
import { typescriptScriptArgs } from "../lib/process/typescript-script.ts";

const configured = clusterEnv();
if (!configured.ok) {
  for (const problem of configured.problems) console.error(`[oncepay] ${problem}`);
  process.exit(2);
}
const env = configured.env;
// Before the tools and the build (minutes on a fresh machine): a database
// that cannot be made is said at once.
await ensureDatabaseAtStart(env.DATABASE_URL, "[oncepay]");

for (const step of [
  ["bash", ["scripts/ensure-cluster-tools.sh"]],
  [process.execPath, typescriptScriptArgs("scripts/build-if-stale.mts")],
] as const) {
  const result = spawnSync(step[0], step[1], { stdio: "inherit" });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

const replicated = env.CLUSTER_DATABASE === "patroni";
console.log(
  `[oncepay] cluster: starting ${replicated ? "3 PostgreSQL nodes under Patroni, " : ""}${env.CLUSTER_SIZE} instances, PgBouncer and HAProxy`,
);
const cluster = await startCluster({
  size: env.CLUSTER_SIZE,
  databaseUrl: env.DATABASE_URL,
  ...(replicated && { replicated: { synchronous: true } }),
  port: env.PORT,
  tlsPort: env.TLS_PORT,
  poolerPoolSize: env.CLUSTER_POOLER_POOL_SIZE,
  instancePoolMax: env.DATABASE_POOL_MAX,
  // As npm start does: given, or made once and kept where tools read it.
  simulatorAdminKey:
    env.SIMULATOR_ADMIN_KEY ??
    (await keptSecret(env.SIMULATOR_ADMIN_KEY_FILE, "payment simulator admin key")),
  output: "inherit",
}).catch((error: unknown) => {
  // startCluster has stopped whatever it started; what remains is the reason.
  console.error(`\n[oncepay] cluster: could not start: ${(error as Error).message ?? error}`);
  process.exit(1);
});

const withoutPassword = (url: string) => url.replace(/\/\/[^@]*@/, "//");
const rows = [
  ["shop (HAProxy, round-robin)", cluster.url, cluster.balancer.process.pid],
  ["shop over HTTPS and HTTP/2", cluster.tlsUrl, cluster.balancer.process.pid],
  [
    "HAProxy statistics",
    `${cluster.balancer.statsUrl}/  (Prometheus: ${cluster.balancer.statsUrl}/metrics)`,
    cluster.balancer.process.pid,
  ],
  ...cluster.instances.map((instance) => [
    `instance ${instance.name}`,
    `${instance.url}  (metrics: ${instance.url}/api/metrics)`,
    instance.process.pid,
  ]),
  [
    `PgBouncer (transaction mode, ${env.CLUSTER_POOLER_POOL_SIZE} server connections)`,
    withoutPassword(cluster.pooler.url),
    cluster.pooler.process.pid,
  ],
  [
    `payment simulator (shared; admin key ${env.SIMULATOR_ADMIN_KEY ? "from SIMULATOR_ADMIN_KEY" : `in ${env.SIMULATOR_ADMIN_KEY_FILE}`})`,
    cluster.simulator.url,
    cluster.simulator.pid,
  ],
];
if (cluster.replicated) {
  const members = await cluster.replicated.members();
  rows.push([
    "PostgreSQL primary (HAProxy, the node etcd names leader)",
    withoutPassword(cluster.databaseUrl),
    cluster.balancer.process.pid,
  ]);
  for (const node of cluster.replicated.nodes) {
    const role = members.find((member) => member.name === node.name)?.role ?? "unknown";
    rows.push([
      `node ${node.name} (${role}; REST ${node.restUrl})`,
      withoutPassword(node.url),
      `${node.patroni.pid} (process group; PostgreSQL ${(await node.postmasterPid()) ?? "not running"})`,
    ]);
  }
}
console.log("\n[oncepay] cluster ready:");
const whatWidth = Math.max(...rows.map(([what]) => String(what).length));
for (const [what, where, pid] of rows)
  console.log(`  ${String(what).padEnd(whatWidth)} ${String(where).padEnd(70)} pid ${pid}`);
console.log(`
[oncepay] ${cluster.tlsUrl} uses a certificate made at this start: ${cluster.certificate.certFile}
  curl:     curl --cacert ${cluster.certificate.certFile} ${cluster.tlsUrl}/api/health
  Chromium: chromium --ignore-certificate-errors-spki-list=${cluster.certificate.spkiSha256} ${cluster.tlsUrl}/lab
  or import the file into the browser's trusted certificates (it is made anew at every start).`);
console.log("\n[oncepay] Ctrl-C stops everything this started.\n");

let stopping = false;
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, async () => {
    if (stopping) return;
    stopping = true;
    console.log("\n[oncepay] cluster: stopping");
    await cluster.stop();
    console.log("[oncepay] cluster: stopped");
    process.exit(0);
  });
}
