import type { LabStrategy } from "@/lib/lab/strategies";

/**
 * "Race all seven", as a sequence: a storm per design, one at a time (a
 * storm must have the browser's connections to itself, or its "on the wire
 * at once" would measure the others), then every design's crash run side
 * by side (each waits out its own key expiry or lease, so one after another
 * would take minutes). A design this server does not run is skipped; a step
 * that fails is recorded and the race goes on with the rest.
 */
export type RaceProgress =
  | { phase: "storms"; strategy: LabStrategy; index: number; total: number }
  | { phase: "crashes"; done: number; total: number };

export interface RaceResult {
  skipped: LabStrategy[];
  failed: { strategy: LabStrategy; step: "storm" | "crash"; message: string }[];
}

export interface RaceSteps {
  storm(strategy: LabStrategy): Promise<void>;
  crash(strategy: LabStrategy): Promise<void>;
  available(strategy: LabStrategy): boolean;
  onProgress(progress: RaceProgress): void;
}

export async function raceDesigns(
  strategies: readonly LabStrategy[],
  steps: RaceSteps,
): Promise<RaceResult> {
  const runnable = strategies.filter((strategy) => steps.available(strategy));
  const result: RaceResult = {
    skipped: strategies.filter((strategy) => !steps.available(strategy)),
    failed: [],
  };
  const failure = (strategy: LabStrategy, step: "storm" | "crash") => (error: unknown) => {
    result.failed.push({
      strategy,
      step,
      message: error instanceof Error ? error.message : String(error),
    });
  };

  for (const [index, strategy] of runnable.entries()) {
    steps.onProgress({ phase: "storms", strategy, index: index + 1, total: runnable.length });
    await steps.storm(strategy).catch(failure(strategy, "storm"));
  }

  await crashSideBySide(
    runnable,
    (strategy) => steps.crash(strategy).catch(failure(strategy, "crash")),
    (progress) => steps.onProgress({ phase: "crashes", ...progress }),
  );
  return result;
}

export interface CrashProgress {
  done: number;
  total: number;
}

/**
 * Every design's crash run at once (each waits out its own key expiry or
 * lease, so one after another would take minutes), saying how many are
 * done before any ends and as each one ends. A crash run that throws counts
 * as done; recording why is the caller's.
 */
export async function crashSideBySide(
  strategies: readonly LabStrategy[],
  crash: (strategy: LabStrategy) => Promise<void>,
  onProgress: (progress: CrashProgress) => void,
): Promise<void> {
  const total = strategies.length;
  let done = 0;
  onProgress({ done, total });
  await Promise.allSettled(
    strategies.map((strategy) =>
      crash(strategy).finally(() => onProgress({ done: ++done, total })),
    ),
  );
}

/** What a long lab button says while its run goes on: where it is, in a few words. */
export function raceButtonLabel(race: RaceProgress): string {
  return race.phase === "storms" ? `Storm ${race.index} of ${race.total}…` : crashButtonLabel(race);
}

export function crashButtonLabel({ done, total }: CrashProgress): string {
  return `Crash runs: ${done} of ${total} done…`;
}
