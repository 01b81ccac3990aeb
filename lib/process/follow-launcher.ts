import { readFileSync } from "node:fs";

/**
 * Next.js and the payment simulator are children of the launcher
 * (scripts/launch.mts), which owns the embedded database; the lab's key
 * stores are started later, by Next.js, for the same launcher; the app
 * instances of `npm run cluster` are launchers started by the cluster
 * script. A starter stopped by a signal it can handle stops what it started.
 * One killed outright (SIGKILL, the OOM killer) cannot, and its children
 * would live on: holding the shop's port, so the next `npm start` fails, and
 * serving checkouts with the database gone. So each child also watches its
 * starter, and stops itself the way a SIGTERM would once it is gone.
 *
 * The starter's pid comes in the environment rather than from
 * `process.ppid`: Node reads that once at start-up, and a child started
 * through tsx has tsx's own process as its parent, not the launcher.
 *
 * "Gone" is judged by the process's identity, not by its pid alone: a
 * killed launcher stays a zombie until its parent reaps it, and its pid is
 * handed to a new process once the kernel wraps around (pid_max is 32768 on
 * many Linux machines, and one test run starts thousands of processes). A
 * pid that answers `kill(pid, 0)` for either reason would keep a child
 * waiting for ever. On Linux, /proc gives each process's start time and
 * state; elsewhere `kill(pid, 0)` is all there is.
 */
export const LAUNCHER_PID_ENV = "ONCEPAY_LAUNCHER_PID";

const CHECK_INTERVAL_MS = 1000;
// Next.js answers SIGTERM with a graceful close, which waits on whatever
// holds the server open. With the launcher gone nobody is left to wait for:
// a process still running this long after its SIGTERM exits anyway.
export const FORCED_EXIT_AFTER_MS = 5000;

/** Calls `then` once, when the process `pid` no longer exists. Returns a function that stops watching. */
export function whenProcessEnds(
  pid: number,
  then: () => void,
  intervalMs: number = CHECK_INTERVAL_MS,
): () => void {
  const identity = processIdentity(pid);
  const timer = setInterval(() => {
    if (identity !== undefined && processIdentity(pid) === identity) return;
    clearInterval(timer);
    then();
  }, intervalMs);
  timer.unref(); // watching never keeps a process alive
  return () => clearInterval(timer);
}

/**
 * In a process a OncePay starter started (ONCEPAY_LAUNCHER_PID set): stop,
 * as on SIGTERM, once the starter is gone, and for good FORCED_EXIT_AFTER_MS
 * later if the SIGTERM did not stop it. Elsewhere (tests starting a
 * simulator of their own, `next start` run by hand) it does nothing.
 */
export function stopWhenLauncherEnds(name: string, env: NodeJS.ProcessEnv = process.env): void {
  const pid = Number(env[LAUNCHER_PID_ENV]);
  if (!Number.isInteger(pid) || pid <= 0) return;
  whenProcessEnds(pid, () => {
    console.error(`[${name}] the process that started it (pid ${pid}) is gone; stopping`);
    setTimeout(() => {
      console.error(`[${name}] still running ${FORCED_EXIT_AFTER_MS} ms after SIGTERM; exiting`);
      process.exit(1);
    }, FORCED_EXIT_AFTER_MS).unref();
    process.kill(process.pid, "SIGTERM");
  });
}

/**
 * What tells this process apart from any later one with the same pid, while
 * it runs: its start time where /proc has it, else only that the pid exists.
 * Undefined once it has ended (a zombie has ended: it only waits to be reaped).
 */
export function processIdentity(pid: number): string | undefined {
  let stat: ProcessStat;
  try {
    stat = processStat(pid);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" && process.platform === "linux") return undefined;
    return existsBySignal(pid) ? "running" : undefined;
  }
  return stat.state === "Z" || stat.state === "X" ? undefined : `started ${stat.startTime}`;
}

export interface ProcessStat {
  state: string;
  parent: number;
  processGroup: number;
  startTime: string;
}

/** A process's state, group and start time from /proc/<pid>/stat (Linux); throws where there is none. */
export function processStat(pid: number): ProcessStat {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  // "pid (comm) state ppid pgrp …": comm may hold spaces and parentheses, so
  // the fields are counted from the last ")". State is field 3, the parent
  // 4, the process group 5, the start time 22.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return {
    state: fields[0]!,
    parent: Number(fields[1]),
    processGroup: Number(fields[2]),
    startTime: fields[19]!,
  };
}

function existsBySignal(pid: number): boolean {
  try {
    process.kill(pid, 0); // signal 0: only asks whether the process exists
    return true;
  } catch (error) {
    // EPERM: it exists, it is just not ours to signal.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
