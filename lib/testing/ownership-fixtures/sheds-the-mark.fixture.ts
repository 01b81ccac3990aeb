import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { it } from "vitest";
import { report } from "@/lib/testing/ownership-fixtures/report";

/**
 * A process that does not carry the run's mark, as Patroni starts
 * PostgreSQL (with only PATH, the locale and PG* variables), working in a
 * folder of the run, as PostgreSQL works in its data folder. It keeps the
 * probe only so that the test can find it. Ctrl-C comes once it runs.
 */
it(
  "starts a process without the run's mark, then waits for Ctrl-C",
  { timeout: 120_000 },
  async () => {
    const dataFolder = mkdtempSync(path.join(tmpdir(), "oncepay-unmarked-"));
    const unmarked = spawn(process.execPath, ["-e", "setInterval(() => {}, 60_000)"], {
      cwd: dataFolder,
      env: {
        NODE_ENV: "test",
        PATH: process.env.PATH,
        OWNERSHIP_PROBE: process.env.OWNERSHIP_PROBE,
      },
      detached: true,
      stdio: "ignore",
    });
    unmarked.unref();
    await report({ launchers: [unmarked.pid] });
    await new Promise(() => {}); // never settles: Ctrl-C ends the run
  },
);
