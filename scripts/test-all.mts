/**
 * `npm test`: every check, one phase after another, stopping at the first
 * that fails, then how long each phase took. The times are what tells a
 * slow phase from a slow machine; CI (`.ci/run`) adds its install time and
 * prints the table at the end of each leg (PHASE_TIMES_FILE).
 */
import { spawnSync } from "node:child_process";
import { appendFileSync } from "node:fs";
import { formatPhaseTimes, type PhaseTime } from "../lib/build/phase-times.ts";
import { TYPES_CHECKED_ENV } from "../lib/build/types-checked.ts";

const PHASES = [
  ["typecheck", "typecheck"],
  ["lint", "lint"],
  ["format", "format:check"],
  ["build", "build"],
  ["package", "test:package"],
  ["Vitest", "test:unit"],
  ["Playwright", "test:e2e"],
] as const;

const times: PhaseTime[] = [];
const env = { ...process.env };
let failed: string | undefined;
for (const [phase, script] of PHASES) {
  const started = performance.now();
  const { status, signal } = spawnSync("npm", ["run", script], { stdio: "inherit", env });
  const time = { phase, seconds: (performance.now() - started) / 1000 };
  times.push(time);
  if (process.env.PHASE_TIMES_FILE)
    appendFileSync(process.env.PHASE_TIMES_FILE, `${time.phase}\t${time.seconds.toFixed(1)}\n`);
  if (status !== 0) {
    failed = `${phase} failed (${signal ?? `exit code ${status}`})`;
    break;
  }
  // The build need not check again what the type check has just passed.
  if (phase === "typecheck") env[TYPES_CHECKED_ENV] = "1";
}

console.log(`\n[test] ${failed ?? "every phase passed"}\n${formatPhaseTimes(times)}`);
process.exit(failed ? 1 : 0);
