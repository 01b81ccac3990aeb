import { afterAll, afterEach, expect, it } from "vitest";
import { startProcess, waitUntil, type GroupProcess } from "@/lib/process/process-group";
import { typescriptScriptArgs } from "@/lib/process/typescript-script";
import { closeTestDb, onServerUnderTest, unusedPostgresDatabase } from "@/lib/testing/database";
import {
  documentedCommands,
  namedDatabase,
  npmScriptOf,
  scriptFileOf,
} from "@/lib/testing/documented-commands";
import { describeOnServer } from "@/lib/testing/postgres-server-only";
import { processesInGroup, stillRunning, type RunningProcess } from "@/lib/testing/processes";

/**
 * `npm run cluster` ended any way: every part it started (HAProxy,
 * PgBouncer, the app instances with all that each launcher started, the
 * shared payment simulator) ends within 10 s. Each part runs in a process
 * group of its own, so a SIGKILL of the cluster script reaches none of them:
 * the instances watch the script, and HAProxy and PgBouncer get SIGTERM from
 * the kernel when it ends (their parent-death signal).
 *
 * Each run is the command docs/cluster.md shows (read from it), on a
 * database name the server has never had, as on a fresh machine: the
 * script must create it before the cluster can become ready.
 */
const WITHIN_MS = 10_000;

const documented = documentedCommands().find(
  (command) =>
    npmScriptOf(command) === "cluster" &&
    namedDatabase(command) &&
    (command.env.CLUSTER_DATABASE ?? "server") === "server",
);
let database: ReturnType<typeof unusedPostgresDatabase> | undefined;
let cluster: GroupProcess | undefined;

describeOnServer("pooler", "npm run cluster, ended by a signal", () => {
  afterEach(async () => {
    await cluster?.kill();
    cluster = undefined;
    await database?.drop();
    database = undefined;
  });
  afterAll(closeTestDb);

  it.each(["SIGTERM", "SIGINT", "SIGKILL"] as const)(
    "%s: the docs' command, on a database the server lacks, starts; then every part ends within 10 s",
    async (signal) => {
      if (!documented) throw new Error("docs/ show no `npm run cluster` that names a database");
      const { url, database: documentedName } = namedDatabase(documented)!;
      database = unusedPostgresDatabase(documentedName);
      expect(await database.exists()).toBe(false);
      let output = "";
      const script = startProcess({
        command: process.execPath,
        args: typescriptScriptArgs(scriptFileOf("cluster")),
        env: {
          ...process.env,
          ...documented.env,
          DATABASE_URL: onServerUnderTest(url, database.name),
          // Two instances and free ports: affordable, and beside other runs.
          CLUSTER_SIZE: "2",
          PORT: "0",
          TLS_PORT: "0",
          LOG_LEVEL: "warn",
          NEXT_TELEMETRY_DISABLED: "1",
        },
        output: (chunk) => (output += chunk),
      });
      cluster = script;
      await waitUntil(async () => output.includes("Ctrl-C stops everything"), {
        timeoutMs: 150_000,
        process: script,
        describe: () => `The cluster did not start:\n${output}`,
      });
      expect(output).toContain(`[oncepay] database "${database.name}" did not exist: created it`);

      // Each part leads a process group of its own; the table prints its pid.
      const partGroups = [...output.matchAll(/ pid (\d+)$/gm)].map((match) => Number(match[1]));
      const started: RunningProcess[] = [script.pid, ...new Set(partGroups)].flatMap((group) =>
        processesInGroup(group),
      );
      const commandLines = started.map((process) => process.commandLine);
      for (const expected of [
        /haproxy/,
        /pgbouncer/,
        /^next-server/,
        /payment-simulator\.mts/,
        /launch\.mts/,
      ]) {
        expect(commandLines, `no process matching ${expected}`).toContainEqual(
          expect.stringMatching(expected),
        );
      }
      expect(commandLines.filter((line) => /^next-server/.test(line))).toHaveLength(2);

      process.kill(script.pid, signal);
      const signalledAt = performance.now();
      await expect
        .poll(
          () => stillRunning(started).map((process) => `${process.pid} ${process.commandLine}`),
          { timeout: WITHIN_MS + 2_000, interval: 100 },
        )
        .toEqual([]);
      const endedAfterMs = performance.now() - signalledAt;
      console.info(
        `[cluster ${signal}] ${started.length} processes ended ${Math.round(endedAfterMs)} ms after the signal`,
      );
      expect(endedAfterMs).toBeLessThan(WITHIN_MS);
    },
    240_000,
  );
});
