import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { once } from "node:events";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { processesCarrying } from "@/lib/testing/processes";

/**
 * Every process a test starts is owned: when the test times out while it
 * goes on starting app servers, or the run gets Ctrl-C while one serves,
 * nothing it started is left running once Vitest has exited, and no folder
 * it made is left behind. Each case runs a fixture
 * (lib/testing/ownership-fixtures/) in a Vitest of its own, in a process
 * group of its own as a shell runs a command, with a TMPDIR of its own and
 * a probe in its environment, which every process it starts inherits
 * (lib/testing/processes.ts finds them by it).
 */
const FIXTURES = "lib/testing/ownership-fixtures";
const PROBE = "OWNERSHIP_PROBE";
// A net only: a run takes a few seconds, and it waits on the fixture's exit.
const CASE_TIMEOUT_MS = 90_000;

interface FixtureRun {
  exit: { code: number | null; signal: NodeJS.Signals | null };
  output: string;
  /** The launchers the fixture said it had started. */
  launchers: number[];
  /** Still running after the fixture's Vitest exited: its processes, by pid and command line. */
  leftProcesses: string[];
  /**
   * Left in the TMPDIR it was given by what its tests started: every such
   * folder is named oncepay-*. (Vitest makes a folder of its own there
   * before any setup runs, and leaves it on Ctrl-C: not ours to remove.)
   */
  leftFiles: string[];
}

async function runFixture(
  file: string,
  { interrupt }: { interrupt: boolean },
): Promise<FixtureRun> {
  const probe = randomUUID();
  const tmp = await mkdtemp(path.join(tmpdir(), "oncepay-ownership-"));
  let launchers: number[] = [];
  let reported!: () => void;
  const firstReport = new Promise<void>((resolve) => (reported = resolve));
  const reports = http.createServer((request, response) => {
    let body = "";
    request.on("data", (chunk: Buffer) => (body += chunk.toString()));
    request.on("end", () => {
      launchers = (JSON.parse(body) as { launchers: number[] }).launchers;
      response.end();
      reported();
    });
  });
  reports.listen(0, "127.0.0.1");
  await once(reports, "listening");

  const env: NodeJS.ProcessEnv = {
    ...process.env,
    TMPDIR: tmp,
    [PROBE]: probe,
    OWNERSHIP_REPORT_URL: `http://127.0.0.1:${(reports.address() as AddressInfo).port}`,
  };
  // Not this run's Vitest settings: the fixture's Vitest is a run of its own.
  for (const name of Object.keys(env)) if (name.startsWith("VITEST")) delete env[name];
  const child = spawn(
    process.execPath,
    [
      path.resolve("node_modules/vitest/vitest.mjs"),
      "run",
      "--config",
      `${FIXTURES}/vitest.config.mts`,
      `${FIXTURES}/${file}`,
    ],
    { detached: true, stdio: ["ignore", "pipe", "pipe"], env },
  );
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const exited = once(child, "exit") as Promise<[number | null, NodeJS.Signals | null]>;
  if (interrupt && (await Promise.race([firstReport.then(() => true), exited.then(() => false)])))
    process.kill(-child.pid!, "SIGINT"); // Ctrl-C: the terminal signals the whole foreground group
  const [code, signal] = await exited;

  const left = processesCarrying(PROBE, probe);
  const leftFiles = (await readdir(tmp)).filter((name) => name.startsWith("oncepay-"));
  // Whatever the outcome, this test leaves nothing behind either.
  for (const running of left) process.kill(running.pid, "SIGKILL");
  await rm(tmp, { recursive: true, force: true });
  reports.close();
  return {
    exit: { code, signal },
    output,
    launchers,
    leftProcesses: left.map((running) => `${running.pid} ${running.commandLine}`),
    leftFiles,
  };
}

describe("what a test starts", () => {
  it(
    "ends, with its folders, when the test times out while it keeps starting app servers",
    { timeout: CASE_TIMEOUT_MS },
    async () => {
      const run = await runFixture("times-out.fixture.ts", { interrupt: false });
      expect(run.output).toContain("Test timed out in 3000ms");
      expect(run.launchers, `the fixture started no launcher:\n${run.output}`).not.toEqual([]);
      expect(run.leftProcesses).toEqual([]);
      expect(run.leftFiles).toEqual([]);
    },
  );

  it(
    "ends, with its folders, when the run gets Ctrl-C while an app server serves",
    { timeout: CASE_TIMEOUT_MS },
    async () => {
      const run = await runFixture("interrupted.fixture.ts", { interrupt: true });
      expect(run.launchers, `the fixture's app server never served:\n${run.output}`).not.toEqual(
        [],
      );
      expect(run.exit.code, run.output).toBe(130); // what a shell shows for a command ended by SIGINT
      expect(run.leftProcesses).toEqual([]);
      expect(run.leftFiles).toEqual([]);
    },
  );

  it(
    "ends, with its folder, when it does not carry the run's mark but works in the run's folder (PostgreSQL under Patroni)",
    { timeout: CASE_TIMEOUT_MS },
    async () => {
      const run = await runFixture("sheds-the-mark.fixture.ts", { interrupt: true });
      expect(run.launchers, `the fixture started nothing:\n${run.output}`).not.toEqual([]);
      expect(run.leftProcesses).toEqual([]);
      expect(run.leftFiles).toEqual([]);
    },
  );
});
