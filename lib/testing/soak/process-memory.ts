import { readdir, readFile } from "node:fs/promises";

/**
 * The resident memory of the Next.js server in an app's process group (the
 * launcher, Next.js and the payment simulator share one). Linux only: it
 * reads /proc, which is where the soak runs.
 */
export async function nextServerRssMb(processGroup: number): Promise<number> {
  let total = 0;
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = await readFile(`/proc/${entry}/stat`, "utf8");
      // Fields after the command (which may hold spaces) start after its closing parenthesis; pgrp is the third.
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[2]) !== processGroup) continue;
      const command = await readFile(`/proc/${entry}/cmdline`, "utf8");
      if (!command.startsWith("next-server")) continue;
      const status = await readFile(`/proc/${entry}/status`, "utf8");
      total += Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) / 1024;
    } catch {
      // The process ended while we looked.
    }
  }
  return total;
}
