import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { processStat } from "@/lib/process/follow-launcher";
import {
  processesCarrying,
  processesWorkingIn,
  type RunningProcess,
} from "@/lib/testing/processes";

/**
 * Whatever a Vitest run starts ends with the run, and its folders go with
 * it, however a test ends (passed, failed, timed out while it kept going)
 * and however the run ends (done, a worker killed, Ctrl-C).
 *
 * One folder per run, made here and given to everything as TMPDIR: each
 * temporary folder a test makes (an app server's, embedded data, a
 * throwaway PostgreSQL, the cluster's) and whatever its processes make
 * land in it. One mark per run, ONCEPAY_TEST_RUN, in the environment the
 * workers start with and so in every process a test starts, and all they
 * start in turn. At the end every process still carrying the mark gets
 * SIGTERM, then SIGKILL, and the folder is removed. So does every process
 * working in the folder: PostgreSQL under Patroni does not carry the mark
 * (Patroni starts it with a few variables only) but works in its data
 * folder, which is in the run's.
 *
 * The end runs at the global teardown, and again on the main process's
 * exit: on Ctrl-C Vitest exits at once, without a teardown, and its
 * workers die of the SIGINT, while the processes tests started in groups
 * of their own (launchers, PostgreSQL) never got it. It is synchronous for
 * that reason: an exit handler cannot wait on anything.
 */
export const TEST_RUN_ENV = "ONCEPAY_TEST_RUN";

/** How long the run's processes get to stop after SIGTERM before SIGKILL (a launcher's Next.js gets 5 s). */
const STOP_GRACE_MS = 6000;
/** SIGKILL cannot be refused: waiting for it keeps the folder's removal from racing a dying writer. */
const KILL_WAIT_MS = 2000;
const POLL_MS = 50;

export interface TestRun {
  /** The run's folder, also TMPDIR from now on. */
  readonly root: string;
  /** Ends the run's processes and removes its folder; once, and only from the process that began it. */
  end(): void;
}

export function beginTestRun(): TestRun {
  const root = mkdtempSync(path.join(tmpdir(), "oncepay-run-"));
  // Others may pass through (not list): PostgreSQL, run as postgres, keeps its data in folders below.
  chmodSync(root, 0o711);
  process.env.TMPDIR = root;
  process.env[TEST_RUN_ENV] = root;

  let ended = false;
  const endRun = (spareWorkers: boolean) => {
    if (ended) return;
    ended = true;
    process.off("exit", onExit);
    endProcesses(() => runProcesses(root).filter(spareWorkers ? notAWorker : notSelf));
    rmSync(root, { recursive: true, force: true, maxRetries: 3 });
  };
  // On exit the workers go too: they are ending, or would be left without their run.
  const onExit = () => endRun(false);
  process.on("exit", onExit);
  // At the teardown Vitest still has to close its workers, which carry the mark too.
  return { root, end: () => endRun(true) };
}

function runProcesses(root: string): RunningProcess[] {
  const byPid = new Map<number, RunningProcess>();
  for (const running of [...processesCarrying(TEST_RUN_ENV, root), ...processesWorkingIn(root)])
    byPid.set(running.pid, running);
  return [...byPid.values()];
}

function notSelf(running: RunningProcess): boolean {
  return running.pid !== process.pid;
}

/** Vitest's workers: this process's children in its own process group (what tests start has a group of its own, or a worker as parent). */
function notAWorker(running: RunningProcess): boolean {
  if (!notSelf(running)) return false;
  try {
    const stat = processStat(running.pid);
    return !(
      stat.parent === process.pid && stat.processGroup === processStat(process.pid).processGroup
    );
  } catch {
    return false; // already gone
  }
}

/**
 * SIGTERM to each, SIGKILL to those left after the grace. Looked up afresh
 * each time: a launcher caught while starting may spawn one more child
 * before it dies, and that child carries the mark too.
 */
function endProcesses(find: () => RunningProcess[]): void {
  const killAt = Date.now() + STOP_GRACE_MS;
  const giveUpAt = killAt + KILL_WAIT_MS;
  const terminated = new Set<string>();
  for (;;) {
    const left = find();
    if (left.length === 0 || Date.now() > giveUpAt) return;
    for (const running of left) {
      const once = `${running.pid} ${running.identity}`;
      if (Date.now() >= killAt) signal(running.pid, "SIGKILL");
      else if (!terminated.has(once)) {
        terminated.add(once);
        signal(running.pid, "SIGTERM");
      }
    }
    sleepSync(POLL_MS);
  }
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // Ended in between.
  }
}

const sleeper = new Int32Array(new SharedArrayBuffer(4));
function sleepSync(ms: number): void {
  Atomics.wait(sleeper, 0, 0, ms);
}
