import { readdir, readFile } from "node:fs/promises";

/**
 * CPU time spent by groups of processes, read from /proc (Linux): what
 * limits a run is whichever process (or group) was busiest. Clock ticks are
 * 1/100 s on Linux.
 */
const TICKS_PER_SECOND = 100;

interface ProcessStat {
  pid: number;
  parent: number;
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
    stats.push({
      pid: Number(entry),
      parent: Number(fields[1]),
      comm,
      processGroup: Number(fields[2]),
      cpuSeconds: (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND,
    });
  }
  return stats;
}

/**
 * A named set of processes: a process and everything it started (tsx runs a
 * script in a child of its own), a process group (a cluster part), or every
 * process of a command (PostgreSQL's backends).
 */
export type ProcessGroup =
  | { name: string; tree: number }
  | { name: string; processGroup: number }
  | { name: string; comm: string };

export async function cpuSecondsBy(groups: readonly ProcessGroup[]): Promise<Map<string, number>> {
  const stats = await processStats();
  return new Map(
    groups.map((group) => [
      group.name,
      stats
        .filter((stat) => belongs(stat, group, stats))
        .reduce((sum, stat) => sum + stat.cpuSeconds, 0),
    ]),
  );
}

function belongs(stat: ProcessStat, group: ProcessGroup, all: readonly ProcessStat[]): boolean {
  if ("tree" in group) return descendsFrom(stat, group.tree, all);
  if ("comm" in group) return stat.comm === group.comm;
  return stat.processGroup === group.processGroup;
}

function descendsFrom(stat: ProcessStat, root: number, all: readonly ProcessStat[]): boolean {
  const byPid = new Map(all.map((candidate) => [candidate.pid, candidate]));
  for (let current: ProcessStat | undefined = stat; current; current = byPid.get(current.parent)) {
    if (current.pid === root) return true;
    if (current.parent <= 1) return false;
  }
  return false;
}

/** How busy the whole machine was between two readings, in % of one core. */
export async function machineTicks(): Promise<{ busy: number; total: number }> {
  // The first line of /proc/stat: user nice system idle iowait irq softirq steal …
  const fields = (await readFile("/proc/stat", "utf8"))
    .split("\n", 1)[0]!
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number);
  const idle = (fields[3] ?? 0) + (fields[4] ?? 0);
  const total = fields.slice(0, 8).reduce((sum, value) => sum + value, 0);
  return { busy: total - idle, total };
}
