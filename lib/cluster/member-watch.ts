import { setTimeout as delay } from "node:timers/promises";
import type { GroupProcess } from "@/lib/process/process-group";

/**
 * Waiting for the replicated PostgreSQL (lib/cluster/patroni.ts) to come
 * up, or back, without waiting for what cannot happen: a member whose
 * process has exited will not become ready, so the wait stops as soon as
 * one has, with that member's last lines, instead of at its timeout.
 */

/** A process of the cluster, with the last lines it printed. */
export interface Member {
  readonly name: string;
  readonly process: GroupProcess;
  lastLines(): string;
}

/**
 * The last `limit` lines of what a process prints, while passing everything
 * on; `keep` (called once per line, in order) leaves out what says nothing.
 */
export function keepLastLines(
  output: "inherit" | ((chunk: string) => void),
  { limit = 40, keep = () => true }: { limit?: number; keep?: (line: string) => boolean } = {},
): { output: (chunk: string) => void; lastLines(): string } {
  const lines: string[] = [];
  let partial = "";
  return {
    output(chunk) {
      const parts = (partial + chunk).split("\n");
      partial = parts.pop()!;
      lines.push(...parts.filter((line) => line.trim() !== "" && keep(line)));
      lines.splice(0, Math.max(0, lines.length - limit));
      if (output === "inherit") process.stdout.write(chunk);
      else output(chunk);
    },
    lastLines: () => [...lines, ...(partial.trim() === "" ? [] : [partial])].join("\n"),
  };
}

const exitCodes = new WeakMap<GroupProcess, number | null>();
const watched = new WeakSet<GroupProcess>();

/** Whether the member's process has exited, recorded from the first time it is asked. */
function hasExited(member: Member): boolean {
  if (!watched.has(member.process)) {
    watched.add(member.process);
    void member.process.exited.then((code) => exitCodes.set(member.process, code));
  }
  return exitCodes.has(member.process);
}

function exitReport(member: Member): string {
  const code = exitCodes.get(member.process);
  const how = code === null ? "was killed by a signal" : `exited with code ${code}`;
  const lines = member.lastLines();
  return `${member.name} ${how}${lines ? `; its last lines:\n${indent(lines)}` : " and printed nothing"}`;
}

/** The first member that has exited, reported; undefined while all run. */
export function anyExited(members: readonly Member[]): string | undefined {
  const gone = members.find(hasExited);
  return gone && exitReport(gone);
}

/** Every member exited, reported; undefined while one still runs. */
export function allExited(members: readonly Member[]): string | undefined {
  const states = members.map(hasExited);
  return members.length > 0 && states.every(Boolean)
    ? members.map(exitReport).join("\n")
    : undefined;
}

export function indent(text: string): string {
  return text
    .split("\n")
    .map((line) => `    ${line}`)
    .join("\n");
}

/**
 * Polls `ready` until it is true. Fails at once when `failed` names a reason
 * (a member exited, Patroni reports a state it does not leave on its own),
 * and after `timeoutMs` only when nothing said why.
 */
export async function waitForCluster(
  ready: () => Promise<boolean>,
  {
    timeoutMs,
    describe,
    failed,
  }: { timeoutMs: number; describe: () => string; failed: () => Promise<string | undefined> },
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const reason = await failed();
    if (reason !== undefined) throw new Error(`${describe()}: ${reason}`);
    if (await ready().catch(() => false)) return;
    if (Date.now() >= deadline) throw new Error(`${describe()} (not ready within ${timeoutMs} ms)`);
    await delay(100);
  }
}
