/**
 * Starts OncePay: the database first, then the payment simulator, then
 * Next.js behind OncePay's own HTTP server (scripts/serve.mts).
 *
 *   node --import tsx scripts/launch.mts start   # production server (after `next build`)
 *   node --import tsx scripts/launch.mts dev     # development server
 *
 * With DATABASE_URL set it uses that PostgreSQL: it creates the database
 * when the server does not have it yet, and migrates it. Without it, it
 * starts the embedded PGlite database (persisted in EMBEDDED_DATA_DIR) and
 * serves it on a local port, so the app talks to it exactly as to a server.
 * Signals are forwarded to Next.js, which gets NEXT_STOP_GRACE_MS to finish
 * the requests in progress before it is killed; the embedded database is
 * closed cleanly once Next.js exits, so a restart is not a crash recovery.
 * If the launcher itself is killed outright, Next.js, the simulator and the
 * lab's key stores notice within a second and stop too; so does a launcher
 * whose own starter (the cluster script) is gone
 * (lib/process/follow-launcher.ts).
 */
import { spawn } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { keptSecret } from "../lib/auth/kept-secret.ts";
import { launcherEnv } from "../lib/env.ts";
import { startEmbeddedDatabase, type EmbeddedDatabase } from "../lib/db/embedded.ts";
import { ensureDatabaseAtStart } from "../lib/db/ensure-database-at-start.ts";
import { migrate } from "../lib/db/migrate.ts";
import { LAUNCHER_PID_ENV, stopWhenLauncherEnds } from "../lib/process/follow-launcher.ts";
import { bundleServer } from "../lib/process/server-bundle.ts";
import {
  LOCAL_SIMULATOR_SECRET_KEY,
  spawnPaymentSimulator,
  type SimulatorProcess,
} from "../lib/payments/simulator/process.ts";

const mode = process.argv[2];
if (mode !== "start" && mode !== "dev") {
  console.error("usage: node --import tsx scripts/launch.mts start|dev");
  process.exit(2);
}

const EXTRA_EMBEDDED_CONNECTIONS = 5;
// Long enough for a checkout in progress to finish (the provider's own
// answer takes well under a second); short enough that stopping the shop
// never hangs on a request that does not end.
const NEXT_STOP_GRACE_MS = 5000;

const env = launcherEnv();
// The process to signal: SIGTERM (or Ctrl-C) stops everything cleanly.
console.log(`[oncepay] launcher: pid ${process.pid}`);
stopWhenLauncherEnds("oncepay launcher");
let embedded: EmbeddedDatabase | undefined;
let databaseUrl = env.DATABASE_URL;

if (databaseUrl) {
  console.log(`[oncepay] database: PostgreSQL at ${describeUrl(databaseUrl)} (from DATABASE_URL)`);
  if (env.DIRECT_DATABASE_URL)
    console.log(
      `[oncepay] migrations: straight to ${describeUrl(env.DIRECT_DATABASE_URL)} (from DIRECT_DATABASE_URL)`,
    );
  // A fresh server has no database of that name yet: made here, before the
  // migrations and the simulator connect (or one line says what to run).
  await ensureDatabaseAtStart(env.DIRECT_DATABASE_URL ?? databaseUrl, "[oncepay]");
} else {
  const dataDir = path.resolve(env.EMBEDDED_DATA_DIR);
  // Slots beyond the app's pool leave room for psql, tests and tools.
  embedded = await startEmbeddedDatabase(
    dataDir,
    env.DATABASE_POOL_MAX + EXTRA_EMBEDDED_CONNECTIONS,
  );
  databaseUrl = embedded.url;
  console.log(
    `[oncepay] database: embedded PGlite, data in ${path.relative(process.cwd(), dataDir) || "."}, served at ${describeUrl(databaseUrl)} (no DATABASE_URL set)`,
  );
}

const demoFaults = env.DEMO_FAULTS ?? (embedded ? "on" : "off");
console.log(
  `[oncepay] demo faults: ${demoFaults}${env.DEMO_FAULTS ? "" : " (default for this database)"}`,
);
// PGlite runs one statement at a time: a storm of 200 would only be slow there.
const labMaxStormSize = env.LAB_MAX_STORM_SIZE ?? (embedded ? 50 : undefined);

// The runner holds a session-level advisory lock, which a pooler in
// transaction mode cannot keep: migrations go to PostgreSQL itself.
const report = await migrate(env.DIRECT_DATABASE_URL ?? databaseUrl);
console.log(
  report.applied.length > 0
    ? `[oncepay] migrations applied: ${report.applied.join(", ")}`
    : `[oncepay] migrations: up to date (${report.alreadyApplied} applied)`,
);

// Where browsers reach the shop (the bank's 3-D Secure page sends shoppers
// back there), and where this machine's simulator reaches it with events.
const ownAddress = `http://${loopbackFor(env.HOSTNAME)}:${env.PORT}`;
const publicUrl = env.PUBLIC_URL ?? (env.PORT === 0 ? undefined : ownAddress);
const webhookSecret =
  env.STRIPE_WEBHOOK_SECRET ??
  `whsec_${await keptSecret(env.STRIPE_WEBHOOK_SECRET_FILE, "webhook signing secret")}`;

// The simulator stands in for Stripe, not for part of the app: it talks to
// PostgreSQL itself.
const payments = await startPayments(env.DIRECT_DATABASE_URL ?? databaseUrl);

if (env.DATABASE_URL_FILE) {
  await mkdir(path.dirname(path.resolve(env.DATABASE_URL_FILE)), { recursive: true });
  await writeFile(env.DATABASE_URL_FILE, databaseUrl);
}

const sessionSecret = env.SESSION_SECRET ?? (await keptSecret(env.SESSION_SECRET_FILE));

const serverArgs = [await bundleServer(), mode, String(env.PORT), env.HOSTNAME];
const child = spawn(process.execPath, serverArgs, {
  stdio: "inherit",
  env: {
    ...process.env,
    // What `next start` and `next dev` would set: React's production or development build.
    NODE_ENV: mode === "start" ? "production" : "development",
    DATABASE_URL: databaseUrl,
    DATABASE_POOL_MAX: String(env.DATABASE_POOL_MAX),
    // All of the embedded database's connections share one session, where
    // two connections' prepared statements would collide.
    ...(embedded && { DATABASE_STATEMENTS: "unnamed" }),
    // One process on one database: its own commits wake its waiters.
    ...(embedded && { KEY_LISTENER: "off" }),
    DEMO_FAULTS: demoFaults,
    SESSION_SECRET: sessionSecret,
    STRIPE_WEBHOOK_SECRET: webhookSecret,
    ...(publicUrl && { PUBLIC_URL: publicUrl }),
    ...(labMaxStormSize !== undefined && { LAB_MAX_STORM_SIZE: String(labMaxStormSize) }),
    ...payments.env,
    [LAUNCHER_PID_ENV]: String(process.pid),
  },
});

let shuttingDown = false;
// Ctrl-C or SIGTERM: a stop asked for, which ends well however Next.js ends.
let stopRequested = false;
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    // A second Ctrl-C means now.
    if (shuttingDown) return void child.kill("SIGKILL");
    shuttingDown = true;
    stopRequested = true;
    child.kill(signal);
    setTimeout(() => {
      console.error(
        `[oncepay] Next.js still running ${NEXT_STOP_GRACE_MS} ms after ${signal}; killing it`,
      );
      child.kill("SIGKILL");
    }, NEXT_STOP_GRACE_MS).unref();
  });
}

// The shop cannot take payments without its provider: if the simulator dies,
// stop rather than answer every checkout with an error.
void payments.simulator?.exited.then((code) => {
  if (shuttingDown || child.exitCode !== null) return;
  console.error(`[oncepay] the payment simulator exited (code ${code}); stopping`);
  shuttingDown = true;
  child.kill("SIGTERM");
});

child.on("exit", async (code, signal) => {
  // Simulator first: it holds connections to the embedded database.
  await payments.simulator?.stop();
  if (embedded) {
    await embedded.close();
    console.log("[oncepay] embedded database closed");
  }
  // Asked to stop, it exits 0 whether Next.js closed within its grace (with
  // 130 or 143 of its own) or was killed after it: the same stop, one answer.
  if (stopRequested) process.exit(0);
  process.exit(code ?? (signal && !shuttingDown ? 1 : 0));
});

/**
 * Which payment provider the app talks to, always through Stripe's SDK:
 * a given simulator (PAYMENT_SIMULATOR_URL), Stripe's test mode
 * (STRIPE_SECRET_KEY alone), or by default a local simulator started here.
 */
async function startPayments(
  databaseUrl: string,
): Promise<{ env: Record<string, string>; simulator?: SimulatorProcess }> {
  if (env.PAYMENT_SIMULATOR_URL) {
    console.log(
      `[oncepay] payments: Stripe API at the simulator ${env.PAYMENT_SIMULATOR_URL} (from PAYMENT_SIMULATOR_URL)`,
    );
    return {
      env: {
        PAYMENT_SIMULATOR_URL: env.PAYMENT_SIMULATOR_URL,
        STRIPE_SECRET_KEY: env.STRIPE_SECRET_KEY ?? LOCAL_SIMULATOR_SECRET_KEY,
      },
    };
  }
  if (env.STRIPE_SECRET_KEY) {
    console.log("[oncepay] payments: Stripe test mode (from STRIPE_SECRET_KEY)");
    return { env: { STRIPE_SECRET_KEY: env.STRIPE_SECRET_KEY } };
  }
  // The key is for tests and tools, which read it from the file (or were
  // the ones to give it), and for the app only with demo faults on: its
  // "Duplicate webhooks" demo asks the simulator to deliver events again.
  const adminKey =
    env.SIMULATOR_ADMIN_KEY ??
    (await keptSecret(env.SIMULATOR_ADMIN_KEY_FILE, "payment simulator admin key"));
  // The simulator accepts only keys it was given or registered: the app's must be one.
  const simulator = await spawnPaymentSimulator({
    databaseUrl,
    port: env.SIMULATOR_PORT,
    poolMax: embedded ? 1 : undefined,
    apiKeys: [LOCAL_SIMULATOR_SECRET_KEY],
    adminKey,
    // Every event of the shop's account comes to this instance, signed with the secret it checks.
    webhook: { url: `${ownAddress}/api/webhooks/stripe`, secret: webhookSecret },
  });
  console.log(
    `[oncepay] payments: Stripe API at the local payment simulator ${simulator.url} (no STRIPE_SECRET_KEY set); admin key ${env.SIMULATOR_ADMIN_KEY ? "from SIMULATOR_ADMIN_KEY" : `in ${env.SIMULATOR_ADMIN_KEY_FILE}`}`,
  );
  return {
    env: {
      PAYMENT_SIMULATOR_URL: simulator.url,
      STRIPE_SECRET_KEY: LOCAL_SIMULATOR_SECRET_KEY,
      ...(demoFaults === "on" && { SIMULATOR_ADMIN_KEY: adminKey }),
    },
    simulator,
  };
}

/** An address this machine reaches a server on that listens on `hostname` (all interfaces: loopback). */
function loopbackFor(hostname: string): string {
  if (hostname === "0.0.0.0" || hostname === "") return "127.0.0.1";
  if (hostname === "::") return "[::1]";
  return hostname.includes(":") ? `[${hostname}]` : hostname;
}

/** host:port/database, never the password. */
function describeUrl(url: string): string {
  const parsed = new URL(url);
  return `${parsed.hostname}:${parsed.port || 5432}${parsed.pathname}`;
}
