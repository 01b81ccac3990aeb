import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { freePort } from "@/lib/process/free-port";
import { startProcess, waitUntil, type GroupProcess } from "@/lib/process/process-group";
import { typescriptScriptArgs } from "@/lib/process/typescript-script";
import { newAdminKey } from "@/lib/payments/simulator/admin-key";
import { closeTestDb, serverUrlFor, testDb } from "@/lib/testing/database";
import { describeOnServer } from "@/lib/testing/postgres-server-only";

/**
 * What each start-up script does with a database it cannot open: it makes
 * it when the server lets it, and otherwise ends at once with one line
 * saying what to run, never a stack trace and never a hang. The scripts are
 * run as people run them, as processes; none needs a build to get this far.
 */
const SCRIPTS = {
  "npm start (the launcher)": ["scripts/launch.mts", "start"],
  "npm run cluster": ["scripts/cluster.mts"],
  "the payment simulator": ["scripts/payment-simulator.mts"],
} as const;
// Long enough for tsx to load a script on a busy 2-core machine; a hang on the network would take longer.
const ENDS_WITHIN_MS = 15_000;

let running: GroupProcess | undefined;
const databases: string[] = [];
const roles: string[] = [];

afterEach(async () => {
  await running?.stop();
  running = undefined;
});

/** Runs a script with DATABASE_URL, until it exits: its exit code and everything it printed. */
async function runUntilExit(
  script: readonly string[],
  databaseUrl: string,
): Promise<{ code: number | null; output: string; tookMs: number }> {
  let output = "";
  const startedAt = performance.now();
  running = startProcess({
    command: process.execPath,
    args: typescriptScriptArgs(script[0]!, ...script.slice(1)),
    env: scriptEnv(databaseUrl),
    output: (chunk) => (output += chunk),
  });
  const code = await Promise.race([
    running.exited,
    new Promise<"hung">((resolve) => setTimeout(() => resolve("hung"), ENDS_WITHIN_MS)),
  ]);
  if (code === "hung") throw new Error(`Still running after ${ENDS_WITHIN_MS} ms:\n${output}`);
  return { code, output, tookMs: performance.now() - startedAt };
}

function scriptEnv(databaseUrl: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    DATABASE_URL: databaseUrl,
    SIMULATOR_ADMIN_KEY: newAdminKey(),
    SIMULATOR_PORT: "0",
    PORT: "0",
    LOG_LEVEL: "warn",
  };
}

/** The lines it printed, less the launcher's own start-up lines, which say what it is about to use. */
function problemLines(output: string): string[] {
  return output
    .split("\n")
    .filter((line) => line.trim() !== "")
    .filter((line) => !/^\[oncepay\] (launcher: pid|database: PostgreSQL at)/.test(line));
}

describe("a start-up whose PostgreSQL server does not answer", () => {
  it.each(Object.entries(SCRIPTS))(
    "%s: ends at once with one line naming the address, no stack trace",
    async (_, script) => {
      const port = await freePort();

      const { code, output } = await runUntilExit(
        script,
        `postgresql://postgres@127.0.0.1:${port}/oncepay`,
      );

      expect(code).toBe(1);
      const lines = problemLines(output);
      expect(lines, output).toHaveLength(1);
      expect(lines[0]).toMatch(
        new RegExp(
          `^\\[(oncepay|payment-simulator)\\] cannot reach PostgreSQL at 127\\.0\\.0\\.1:${port} \\(`,
        ),
      );
      expect(output).not.toMatch(/^\s+at /m);
    },
  );
});

describeOnServer("databases", "a start-up on a server without its database", () => {
  afterAll(async () => {
    for (const name of databases)
      await testDb().query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`);
    for (const role of roles)
      await testDb().query(`DROP ROLE IF EXISTS ${pg.escapeIdentifier(role)}`);
    await closeTestDb();
  });

  it.each(Object.entries(SCRIPTS))(
    "%s, as a role that may not create databases: ends at once with the one line saying what to run",
    async (_, script) => {
      const role = `oncepay_nocreatedb_${randomBytes(4).toString("hex")}`;
      roles.push(role);
      await testDb().query(`CREATE ROLE ${role} LOGIN NOCREATEDB`);
      const name = `oncepay_startup_${randomBytes(6).toString("hex")}`;

      const { code, output } = await runUntilExit(script, serverUrlFor(name, { user: role }));

      expect(code).toBe(1);
      const lines = problemLines(output);
      expect(lines, output).toHaveLength(1);
      expect(lines[0]).toMatch(
        new RegExp(
          `^\\[(oncepay|payment-simulator)\\] database "${name}" does not exist on .*; create it as a role that may: createdb -h \\S+ -p \\d+ -U postgres -O ${role} ${name}$`,
        ),
      );
      expect(output).not.toMatch(/^\s+at /m);
    },
  );

  it("the payment simulator run by hand on a missing database: creates it, says so in one line, and serves", async () => {
    const name = `oncepay_startup_${randomBytes(6).toString("hex")}`;
    databases.push(name);
    const port = await freePort();
    let output = "";
    running = startProcess({
      command: process.execPath,
      args: typescriptScriptArgs("scripts/payment-simulator.mts"),
      env: { ...scriptEnv(serverUrlFor(name)), SIMULATOR_PORT: String(port) },
      output: (chunk) => (output += chunk),
    });

    await waitUntil(async () => output.includes("listening on"), {
      timeoutMs: 30_000,
      process: running,
      describe: () => `The simulator did not start:\n${output}`,
    });

    expect(output).toContain(`[payment-simulator] database "${name}" did not exist: created it`);
    const ledger = new pg.Client({ connectionString: serverUrlFor(name) });
    await ledger.connect();
    const inLedger = await ledger.query(
      "SELECT count(*)::int AS tables FROM pg_tables WHERE schemaname = 'payment_simulator'",
    );
    await ledger.end();
    expect(inLedger.rows[0].tables).toBeGreaterThan(0);
  });
});
