import { readdirSync, readFileSync } from "node:fs";
import { processIdentity, processStat } from "@/lib/process/follow-launcher";

/**
 * The processes a test started, read from /proc (Linux): which are in a
 * process group, and which of them still run. A process is named by its
 * command line (`next-server (v16…)`, `node --import tsx
 * scripts/lab-redis.mts`, `redis-server 127.0.0.1:…`).
 */
export interface RunningProcess {
  pid: number;
  commandLine: string;
  /** Tells it apart from a later process that reuses its pid. */
  identity: string;
}

export function processesInGroup(processGroup: number): RunningProcess[] {
  const found: RunningProcess[] = [];
  for (const entry of readdirSync("/proc")) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    try {
      const identity = processIdentity(pid);
      if (processStat(pid).processGroup !== processGroup || identity === undefined) continue;
      const commandLine = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ").trim();
      found.push({ pid, commandLine, identity });
    } catch {
      // It ended while we looked.
    }
  }
  return found;
}

/** Those of `processes` that still run (a zombie has ended). */
export function stillRunning(processes: readonly RunningProcess[]): RunningProcess[] {
  return processes.filter((process) => processIdentity(process.pid) === process.identity);
}
