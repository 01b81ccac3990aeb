import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import path from "node:path";
import { lookAtProcess, processStat } from "@/lib/process/follow-launcher";

/**
 * The processes a test started, read from /proc (Linux): which are in a
 * process group, which carry a variable in their environment, and which of
 * them still run. A process is named by its command line (`next-server
 * (v16…)`, `node --import tsx scripts/lab-redis.mts`, `redis-server
 * 127.0.0.1:…`).
 */
export interface RunningProcess {
  pid: number;
  commandLine: string;
  /** Tells it apart from a later process that reuses its pid. */
  identity: string;
}

export function processesInGroup(processGroup: number): RunningProcess[] {
  return runningWhere((pid) => processStat(pid).processGroup === processGroup);
}

/**
 * The processes whose environment holds `name=value`. A process inherits
 * its starter's environment, so this finds everything started under a
 * variable, whatever group, session or parent it has now: the launcher a
 * dead worker left to pid 1, a PostgreSQL that pg_ctl put in a session of
 * its own, one run as another user. It is the environment the process was
 * started with (/proc/<pid>/environ), not what it set itself since.
 */
export function processesCarrying(name: string, value: string): RunningProcess[] {
  const entry = `${name}=${value}`;
  return runningWhere((pid) =>
    readFileSync(`/proc/${pid}/environ`, "utf8").split("\0").includes(entry),
  );
}

/**
 * The processes whose working folder is `folder` or lies below it. This
 * finds those that shed their starter's environment: Patroni starts
 * PostgreSQL with only PATH, the locale and PG* variables, and every
 * PostgreSQL process writes its title over the environment it was given,
 * but each works in its data folder.
 */
export function processesWorkingIn(folder: string): RunningProcess[] {
  const inside = folder + path.sep;
  return runningWhere((pid) => {
    const workingFolder = readlinkSync(`/proc/${pid}/cwd`);
    return workingFolder === folder || workingFolder.startsWith(inside);
  });
}

/** Those of `processes` that still run (a zombie has ended). */
export function stillRunning(processes: readonly RunningProcess[]): RunningProcess[] {
  return processes.filter((process) => {
    const look = lookAtProcess(process.pid);
    // A look that fails proves nothing: count it as still running.
    return (
      look.seen === "nothing" || (look.seen === "running" && look.identity === process.identity)
    );
  });
}

function runningWhere(matches: (pid: number) => boolean): RunningProcess[] {
  const found: RunningProcess[] = [];
  for (const entry of readdirSync("/proc")) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    try {
      const look = lookAtProcess(pid);
      if (look.seen !== "running" || !matches(pid)) continue;
      const identity = look.identity;
      const commandLine = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ").trim();
      found.push({ pid, commandLine, identity });
    } catch {
      // It ended while we looked, or it is not ours to read.
    }
  }
  return found;
}
