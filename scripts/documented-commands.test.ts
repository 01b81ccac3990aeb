import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { buildFreshness } from "@/lib/build/freshness";
import { shellWord } from "@/lib/db/database-setup-error";
import { freePort } from "@/lib/process/free-port";
import { startProcess, waitUntil } from "@/lib/process/process-group";
import { cartBody, createAccount, postOrder } from "@/lib/testing/api-client";
import { closeTestDb, onServerUnderTest, unusedPostgresDatabase } from "@/lib/testing/database";
import { judgeAnswersOf } from "@/lib/testing/judged-apps";
import {
  documentedCommands,
  namedDatabase,
  npmScriptOf,
  type DocumentedCommand,
} from "@/lib/testing/documented-commands";
import { describeOnServer } from "@/lib/testing/postgres-server-only";
import { processesInGroup } from "@/lib/testing/processes";
import { rowsAt } from "@/lib/testing/rows";

/**
 * Every command README.md and docs/ show that names a PostgreSQL database
 * works on a server that does not have it yet, as written. The commands are
 * read from the Markdown (lib/testing/documented-commands.ts): each
 * `npm start` among them is run here as a shell runs it, on a database name
 * the server has never seen; the others are accounted for below.
 */
const documented = documentedCommands();
const commands = documented.filter((command) => namedDatabase(command));
const npmStarts = commands.filter((command) => npmScriptOf(command) === "start");

// Databases every PostgreSQL server has.
const ALWAYS_THERE = new Set(["postgres", "template1"]);
/**
 * How the npm scripts that documented commands run get a database the
 * server lacks. A new documented command that names a database under
 * another script fails the first test until its way is known and tested.
 */
const MAKES_ITS_DATABASE: Record<string, string> = {
  start: "the launcher creates it: each such command is run below",
  cluster:
    "scripts/cluster.mts creates it first, whatever CLUSTER_DATABASE says: lib/cluster/cluster-shutdown.test.ts runs the docs' command on a database the server lacks",
  bench: "bench/checkout.mts starts the app through the launcher, which creates it",
  "bench:cluster": "bench/cluster.mts starts the cluster, whose startCluster creates it",
  "bench:waiting": "bench/waiting.mts starts the cluster, whose startCluster creates it",
  soak: "bench/soak.mts starts the app through the launcher, which creates it",
};

/** Whether the same page shows `createdb … <database>` at or before the command's line. */
function createdFirst(command: DocumentedCommand, database: string): boolean {
  const [file, line] = command.source.split(":");
  return documented.some((other) => {
    const [otherFile, otherLine] = other.source.split(":");
    return (
      otherFile === file &&
      Number(otherLine) <= Number(line) &&
      other.words[0] === "createdb" &&
      other.words.at(-1) === database
    );
  });
}

describe("the documented commands that name a database", () => {
  it("are found in the docs, and each gets its database made: by its script, by a createdb shown before it, or by every server", () => {
    expect(npmStarts.map((command) => command.source)).toContainEqual(
      expect.stringMatching(/^README\.md:\d+$/),
    );

    const unaccounted = commands.filter((command) => {
      const { database } = namedDatabase(command)!;
      if (ALWAYS_THERE.has(database)) return false;
      const script = npmScriptOf(command);
      if (script && MAKES_ITS_DATABASE[script]) return false;
      return !createdFirst(command, database);
    });
    expect(unaccounted.map((command) => `${command.source}: ${command.text}`)).toEqual([]);
  });
});

describeOnServer("databases", "each documented npm start on a database the server lacks", () => {
  afterAll(closeTestDb);

  it.each(npmStarts.map((command) => [`${command.source}: ${command.text}`, command] as const))(
    "%s: becomes ready, a checkout pays, and Ctrl-C stops all of it",
    async (_, command) => {
      // npm start builds first when the build is older than the sources: that is a minute here.
      const freshness = await buildFreshness(process.cwd());
      if (freshness.stale)
        throw new Error(`Run \`npm run build\` first (${freshness.reason}); npm start would build`);
      const documented = namedDatabase(command)!;
      const database = unusedPostgresDatabase(documented.database);
      const { name } = database;
      const databaseUrl = onServerUnderTest(documented.url, name);
      expect(await database.exists()).toBe(false);

      const workDir = await mkdtemp(path.join(tmpdir(), "oncepay-documented-"));
      const port = await freePort();
      let output = "";
      const shell = startProcess({
        // bash runs a lone command in its own place (exec), so the group is
        // what a terminal's foreground job would be: npm and all it started.
        command: "bash",
        args: ["-c", command.text.replace(documented.url, shellWord(databaseUrl))],
        env: runEnv(port, workDir),
        output: (chunk) => (output += chunk),
      });
      const baseUrl = `http://127.0.0.1:${port}`;
      try {
        await waitUntil(async () => (await fetch(`${baseUrl}/api/ready`)).status === 200, {
          timeoutMs: 90_000,
          process: shell,
          describe: () => `\`${command.text}\` did not become ready:\n${output}`,
        });
        expect(output).toContain(`[oncepay] database "${name}" did not exist: created it`);
        judgeAnswersOf(baseUrl);

        const account = await createAccount(baseUrl);
        const key = randomUUID();
        const { response, text } = await postOrder({
          baseUrl,
          token: account.token,
          key,
          body: cartBody(),
        });
        expect(response.status, text).toBe(201);
        const rows = rowsAt(databaseUrl);
        expect(await rows.rowCounts(account.id)).toEqual({ orders: 1, payments: 1 });
        expect(await rows.providerIntents({ keyPrefix: `oncepay:${account.id}:` })).toMatchObject({
          succeeded: 1,
          total: 1,
        });

        // Ctrl-C in a terminal: SIGINT to the whole foreground process group.
        process.kill(-shell.pid, "SIGINT");
        const code = await Promise.race([
          shell.exited,
          new Promise<"running">((resolve) => setTimeout(() => resolve("running"), 15_000)),
        ]);
        expect(code, output).toBe(0);
        expect(processesInGroup(shell.pid).map((left) => left.commandLine)).toEqual([]);
      } finally {
        await shell.stop();
        await rm(workDir, { recursive: true, force: true });
        await database.drop();
      }
    },
    150_000,
  );
});

/**
 * What the shell gets: this environment less what the command sets, and its
 * files kept out of the project's .data. Less npm's own variables too: a
 * reader types the command in a terminal, not inside `npx vitest`, and an
 * npm started with npm exec's variables ends Ctrl-C with 130 where a
 * terminal's ends with 0.
 */
function runEnv(port: number, workDir: string): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const name of Object.keys(env)) if (name.toLowerCase().startsWith("npm_")) delete env[name];
  delete env.DATABASE_URL;
  delete env.SIMULATOR_ADMIN_KEY;
  delete env.SESSION_SECRET;
  return {
    ...env,
    PORT: String(port),
    HOSTNAME: "127.0.0.1",
    SIMULATOR_ADMIN_KEY_FILE: path.join(workDir, "simulator-admin-key"),
    SESSION_SECRET_FILE: path.join(workDir, "session-secret"),
    LOG_LEVEL: "warn",
    NEXT_TELEMETRY_DISABLED: "1",
  };
}
