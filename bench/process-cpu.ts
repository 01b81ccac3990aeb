import { readdir, readFile } from "node:fs/promises";

/**
 * CPU time spent by groups of processes, read from /proc (Linux): what
 * limits a run is whichever process (or group) was busiest. Clock ticks are
 * 1/100 s on Linux.
 */
const TICKS_PER_SECOND = 100;

interface ProcessStat {
  pid: number;
  comm: string;
  processGroup: number;
  /** User plus system CPU, in seconds. */
  cpuSeconds: number;
}

export async function processStats(): Promise<ProcessStat[]> {
  const stats: ProcessStat[] = [];
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const text = await readFile(`/proc/${entry}/stat`, "utf8").catch(() => undefined);
    if (!text) continue;
    // The command name is in parentheses and may hold spaces: the fields start after the last ")".
    const close = text.lastIndexOf(")");
    const comm = text.slice(text.indexOf("(") + 1, close);
    const fields = text.slice(close + 2).split(" ");
    // After comm: state(0) ppid(1) pgrp(2) … utime(11) stime(12).
    stats.push({ pid: Number(entry), comm, processGroup: Number(fields[2]), cpuSeconds: (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND });
  }
  return stats;
}

/** A named set of processes: one process, a process group (a cluster part), or every process of a command (PostgreSQL's backends). */
export type ProcessGroup = { name: string; pid: number } | { name: string; processGroup: number } | { name: string; comm: string };

export async function cpuSecondsBy(groups: readonly ProcessGroup[]): Promise<Map<string, number>> {
  const stats = await processStats();
  return new Map(
    groups.map((group) => [
      group.name,
      stats.filter((stat) => belongs(stat, group)).reduce((sum, stat) => sum + stat.cpuSeconds, 0),
    ]),
  );
}

function belongs(stat: ProcessStat, group: ProcessGroup): boolean {
  if ("pid" in group) return stat.pid === group.pid;
  if ("comm" in group) return stat.comm === group.comm;
  return stat.processGroup === group.processGroup;
}
