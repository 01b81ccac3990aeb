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

/**
 * Calls `then` once, when the process `pid` no longer exists. Returns a
 * function that stops watching. Only a look that sees it gone (no such
 * process, or another process under its pid) ends the watch: a look that
 * fails says nothing, and the next one asks again. A process that has used
 * up its file descriptors (a flood of connections) cannot read /proc, and
 * its launcher is no less alive for that.
 */
export function whenProcessEnds(
  pid: number,
  then: () => void,
  intervalMs: number = CHECK_INTERVAL_MS,
  look: (pid: number) => ProcessLook = lookAtProcess,
): () => void {
  let identity: string | undefined;
  let gone = false;
  const observe = () => {
    const seen = look(pid);
    if (seen.seen === "nothing") return;
    if (seen.seen === "running") identity ??= seen.identity;
    gone = seen.seen === "ended" || seen.identity !== identity;
  };
  observe();
  const timer = setInterval(() => {
    if (!gone) observe();
    if (!gone) return;
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
 * What one look at a process saw: it runs, with what tells it apart from
 * any later process under the same pid (its start time where /proc has it,
 * else only that the pid exists); it has ended (a zombie has: it only waits
 * to be reaped); or nothing, because the look itself failed.
 */
export type ProcessLook =
  { seen: "running"; identity: string } | { seen: "ended" } | { seen: "nothing"; because: string };

export function lookAtProcess(pid: number): ProcessLook {
  let stat: ProcessStat;
  try {
    stat = processStat(pid);
  } catch (error) {
    if (process.platform !== "linux")
      return existsBySignal(pid) ? { seen: "running", identity: "running" } : { seen: "ended" };
    // No entry in /proc: no such process. Anything else (EMFILE, ENFILE:
    // no descriptor left to open it with) is about the look, not the process.
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ESRCH") return { seen: "ended" };
    return { seen: "nothing", because: code ?? String(error) };
  }
  return stat.state === "Z" || stat.state === "X"
    ? { seen: "ended" }
    : { seen: "running", identity: `started ${stat.startTime}` };
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
