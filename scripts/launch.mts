/**
 * Starts OncePay: the database first, then Next.js.
 *
 *   tsx scripts/launch.mts start   # production server (after `next build`)
 *   tsx scripts/launch.mts dev     # development server
 *
 * With DATABASE_URL set it migrates and uses that PostgreSQL. Without it, it
 * starts the embedded PGlite database (persisted in EMBEDDED_DATA_DIR) and
 * serves it on a local port, so the app talks to it exactly as to a server.
 * Signals are forwarded to Next.js; the embedded database is closed cleanly
 * once Next.js exits, so a restart is not a crash recovery.
 */
import { spawn } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { launcherEnv } from "../lib/env.ts";
import { startEmbeddedDatabase, type EmbeddedDatabase } from "../lib/db/embedded.ts";
import { migrate } from "../lib/db/migrate.ts";

const mode = process.argv[2];
if (mode !== "start" && mode !== "dev") {
  console.error("usage: tsx scripts/launch.mts start|dev");
  process.exit(2);
}

const EXTRA_EMBEDDED_CONNECTIONS = 5;

const env = launcherEnv();
let embedded: EmbeddedDatabase | undefined;
let databaseUrl = env.DATABASE_URL;

if (databaseUrl) {
  console.log(`[oncepay] database: PostgreSQL at ${describeUrl(databaseUrl)} (from DATABASE_URL)`);
} else {
  const dataDir = path.resolve(env.EMBEDDED_DATA_DIR);
  // Slots beyond the app's pool leave room for psql, tests and tools.
  embedded = await startEmbeddedDatabase(dataDir, env.DATABASE_POOL_MAX + EXTRA_EMBEDDED_CONNECTIONS);
  databaseUrl = embedded.url;
  console.log(`[oncepay] database: embedded PGlite, data in ${path.relative(process.cwd(), dataDir) || "."}, served at ${describeUrl(databaseUrl)} (no DATABASE_URL set)`);
}

const demoFaults = env.DEMO_FAULTS ?? (embedded ? "on" : "off");
console.log(`[oncepay] demo faults: ${demoFaults}${env.DEMO_FAULTS ? "" : " (default for this database)"}`);

const report = await migrate(databaseUrl);
console.log(
  report.applied.length > 0
    ? `[oncepay] migrations applied: ${report.applied.join(", ")}`
    : `[oncepay] migrations: up to date (${report.alreadyApplied} applied)`,
);

if (env.DATABASE_URL_FILE) {
  await mkdir(path.dirname(path.resolve(env.DATABASE_URL_FILE)), { recursive: true });
  await writeFile(env.DATABASE_URL_FILE, databaseUrl);
}

const nextBin = path.resolve("node_modules", "next", "dist", "bin", "next");
const child = spawn(process.execPath, [nextBin, mode, "--port", String(env.PORT), "--hostname", env.HOSTNAME], {
  stdio: "inherit",
  env: {
    ...process.env,
    DATABASE_URL: databaseUrl,
    DATABASE_POOL_MAX: String(env.DATABASE_POOL_MAX),
    DEMO_FAULTS: demoFaults,
  },
});

let shuttingDown = false;
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    shuttingDown = true;
    child.kill(signal);
  });
}

child.on("exit", async (code, signal) => {
  if (embedded) {
    await embedded.close();
    console.log("[oncepay] embedded database closed");
  }
  process.exit(code ?? (signal && !shuttingDown ? 1 : 0));
});

/** host:port/database, never the password. */
function describeUrl(url: string): string {
  const parsed = new URL(url);
  return `${parsed.hostname}:${parsed.port || 5432}${parsed.pathname}`;
}
