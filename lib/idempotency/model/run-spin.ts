import { execFile } from "node:child_process";
import { copyFile, mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";

/**
 * Runs SPIN on idempotency.pml the way docs/protocol-model.md ("The
 * protocol, model-checked") says to by hand: generate the verifier, compile it, search
 * every state. Each run gets a directory of its own, since SPIN writes pan.c
 * and the trail beside the model.
 */

export const MODEL_FILE = path.join(import.meta.dirname, "idempotency.pml");

/**
 * The broken variants, each a macro in idempotency.pml, and the property its
 * shortest counterexample breaks (docs/protocol-model.md tells each one's
 * story).
 */
export const BROKEN_VARIANTS = {
  NO_LEASE_CHECK_ON_COMPLETE: "orders<=1",
  NO_LEASE_CHECK_ON_RELEASE: "total_charges<=1",
  CLAIM_AFTER_CHARGE: "total_charges<=1",
  REAP_STARTED_KEYS: "orders==total_charges",
} as const;

export type BrokenVariant = keyof typeof BROKEN_VARIANTS;

export interface PanReport {
  errors: number;
  statesStored: number;
  transitions: number;
  depthReached: number;
  elapsedSeconds: number;
  /** The assertion the (shortest) counterexample breaks, as pan prints it (`orders<=1`). */
  violatedAssertion?: string;
  /** What replaying the trail with `spin -t` printed, when pan wrote one. */
  trailReplay?: string;
  /** How many steps the counterexample takes. */
  trailSteps?: number;
  output: string;
}

const SPIN_MISSING =
  "SPIN is not installed, so the protocol model cannot be checked. Run `bash scripts/ensure-spin.sh` (as root it installs Debian's spin and gcc) or `sudo apt-get install spin gcc`.";

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

function run(command: string, args: string[], cwd: string): Promise<Ran> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { cwd, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error && typeof error.code !== "number") {
        reject(
          error.code === "ENOENT"
            ? new Error(
                command === "spin" ? SPIN_MISSING : `${command} is not installed: ${SPIN_MISSING}`,
              )
            : error,
        );
        return;
      }
      resolve({ code: typeof error?.code === "number" ? error.code : 0, stdout, stderr });
    });
  });
}

async function mustRun(command: string, args: string[], cwd: string): Promise<string> {
  const ran = await run(command, args, cwd);
  if (ran.code !== 0)
    throw new Error(
      `${command} ${args.join(" ")} exited with ${ran.code}:\n${ran.stdout}${ran.stderr}`,
    );
  return ran.stdout;
}

function figure(output: string, pattern: RegExp, name: string): number {
  const match = pattern.exec(output);
  if (!match) throw new Error(`pan's output has no ${name}:\n${output}`);
  return Number(match[1]);
}

/** Checks the real model (no variant) or one broken on purpose. */
export async function checkModel(variant?: BrokenVariant): Promise<PanReport> {
  const dir = await mkdtemp(path.join(tmpdir(), "oncepay-spin-"));
  try {
    const model = path.join(dir, path.basename(MODEL_FILE));
    await copyFile(MODEL_FILE, model);
    const defines = variant ? [`-D${variant}`] : [];
    await mustRun("spin", ["-a", ...defines, path.basename(model)], dir);
    // The real model's search is worth optimising for; a broken one is
    // searched for its shortest counterexample (-i, which needs -DREACH to
    // be exact), within a few hundred thousand states, so compile time is
    // what counts there.
    await mustRun(
      "gcc",
      variant ? ["-O0", "-DREACH", "-o", "pan", "pan.c"] : ["-O2", "-o", "pan", "pan.c"],
      dir,
    );
    // -n: no list of unreached states (SPIN counts statements it merged as unreached).
    const { stdout: output } = await run("./pan", variant ? ["-n", "-i"] : ["-n"], dir);
    // With -i pan reports each shorter counterexample it finds; the trail is the last one.
    const violations = [...output.matchAll(/assertion violated (.+) \(at depth \d+\)/g)];
    const report: PanReport = {
      errors: figure(output, /errors: (\d+)/, "error count"),
      statesStored: figure(output, /(\d+) states, stored/, "states stored"),
      transitions: figure(output, /(\d+) transitions/, "transitions"),
      depthReached: figure(output, /depth reached (\d+)/, "depth"),
      elapsedSeconds: figure(output, /elapsed time ([\d.e+-]+) seconds/, "elapsed time"),
      violatedAssertion: violations.at(-1)?.[1]?.replace(/^\((.*)\)$/, "$1"),
      output,
    };
    const trail = `${model}.trail`;
    if (
      await stat(trail).then(
        () => true,
        () => false,
      )
    ) {
      report.trailReplay = await mustRun("spin", ["-t", ...defines, path.basename(model)], dir);
      report.trailSteps = figure(
        report.trailReplay,
        /trail ends after (\d+) steps/,
        "trail length",
      );
    }
    return report;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
