import type { StormReport } from "@/lib/lab/storms";
import type { LabStrategy } from "@/lib/lab/strategies";

/**
 * Which of the runs the page knows of are each design's latest: the page
 * holds the latest 20 runs, each design's latest storm and crash run
 * (however old), and the runs it made since it loaded, and the comparison
 * must pick from all of them, exactly as the server orders runs.
 */
export type RunKind = StormReport["kind"];

/** Newer first: by when the server recorded the run, then by id, as GET /api/lab/storms orders them. */
export function newerFirst(a: StormReport, b: StormReport): number {
  return b.createdAt.localeCompare(a.createdAt) || b.id.localeCompare(a.id);
}

/**
 * Every run in the lists, once, newest first. A run in more than one list
 * keeps its copy from the last of them: pass the freshest reads last.
 */
export function mergeRuns(...lists: readonly (readonly StormReport[])[]): StormReport[] {
  const byId = new Map<string, StormReport>();
  for (const list of lists) for (const report of list) byId.set(report.id, report);
  return [...byId.values()].sort(newerFirst);
}

/** The design's newest run of that kind among `runs`, or undefined when it has none. */
export function latestRun(
  runs: readonly StormReport[],
  strategy: LabStrategy,
  kind: RunKind,
): StormReport | undefined {
  let latest: StormReport | undefined;
  for (const run of runs) {
    if (run.strategy !== strategy || run.kind !== kind) continue;
    if (!latest || newerFirst(run, latest) < 0) latest = run;
  }
  return latest;
}
