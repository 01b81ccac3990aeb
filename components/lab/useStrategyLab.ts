"use client";

import { useEffect, useMemo, useRef, useState } from "react";
import { runCrashScenario, type CrashAttempt, type CrashObservation } from "@/lib/client/lab-crash";
import {
  isCrashObservation,
  isStormObservation,
  loadObservations,
  saveObservation,
  type LabObservation,
} from "@/lib/client/lab-observations";
import {
  browserStormTiming,
  fetchStormReport,
  fireStorm,
  listLatestRunsOfEachDesign,
  listStormReports,
  startLabRun,
  type StormObservation,
  type StormReport,
} from "@/lib/client/lab-storm";
import { latestRun, mergeRuns } from "@/lib/lab/latest-runs";
import {
  crashSideBySide,
  raceDesigns,
  type CrashProgress,
  type RaceProgress,
  type RaceResult,
} from "@/lib/lab/race";
import { LAB_STRATEGIES, type LabStrategy } from "@/lib/lab/strategies";

/** One storm as the page shows it: the server's report, and what this browser saw of it (if it fired it). */
export interface LabRun {
  report: StormReport;
  observation: StormObservation | null;
}

/** One crash scenario: the server's report, and the retries this browser sent (if it ran it). */
export interface CrashRun {
  report: StormReport;
  observation: CrashObservation | null;
}

function sessionStorageOrUndefined(): Storage | undefined {
  try {
    return window.sessionStorage;
  } catch {
    return undefined;
  }
}

const fetchFromPage = (input: string, init: RequestInit) => window.fetch(input, init);
const crashDeps = {
  fetch: fetchFromPage,
  now: () => performance.now(),
  sleep: (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)),
};

const valueOr = <T>(settled: PromiseSettledResult<T>, fallback: T) =>
  settled.status === "fulfilled" ? settled.value : fallback;

/**
 * The lab page's state: the storm size, the runs going on now, the
 * account's latest runs (from the server, so a reload keeps them) with each
 * design's latest storm and crash run however old, and what this browser
 * saw of each.
 */
export function useStrategyLab(
  sizes: readonly number[],
  available: (strategy: LabStrategy) => boolean,
) {
  const [size, setSize] = useState(sizes.includes(10) ? 10 : sizes[0]!);
  // The latest runs as listed, and those this page ran since: the history table.
  const [history, setHistory] = useState<StormReport[]>([]);
  // Each design's latest storm and crash run when the page loaded, however many runs came since.
  const [designLatest, setDesignLatest] = useState<StormReport[]>([]);
  const [observations, setObservations] = useState<ReadonlyMap<string, LabObservation>>(
    () => new Map(),
  );
  const [running, setRunning] = useState<LabStrategy | null>(null);
  // Crash scenarios run side by side, each for as long as its key stays in progress.
  const [crashing, setCrashing] = useState<Partial<Record<LabStrategy, CrashAttempt[]>>>({});
  // "Crash every strategy": how many of its crash runs are done.
  const [crashBatch, setCrashBatch] = useState<CrashProgress | null>(null);
  const [error, setError] = useState<string | null>(null);
  // "Race all seven": where it is now, and, once over, what it could not run.
  const [race, setRace] = useState<RaceProgress | null>(null);
  const [raced, setRaced] = useState<RaceResult | null>(null);
  // Runs start only once the earlier ones are listed, so a listing can
  // never show one of this page's runs that is still on its way.
  const [listed, setListed] = useState(false);
  // What is running, known at once: state reaches the next click only after
  // a render, so two activations in one moment would both see it idle.
  const claimed = useRef({
    storm: false,
    race: false,
    crashBatch: false,
    crashes: new Set<LabStrategy>(),
  });

  useEffect(() => {
    let cancelled = false;
    // Either list may fail; the page shows what came, and runs can still start.
    void Promise.allSettled([
      listStormReports(fetchFromPage),
      listLatestRunsOfEachDesign(fetchFromPage),
    ]).then(([latest, ofEachDesign]) => {
      if (cancelled) return;
      setObservations(loadObservations(sessionStorageOrUndefined()));
      setHistory(valueOr(latest, []));
      setDesignLatest(valueOr(ofEachDesign, []));
      setListed(true);
    });
    return () => {
      cancelled = true;
    };
  }, []);

  /** A run this page made: into the history, with what the browser saw of it. */
  function recordRun(report: StormReport, observation: LabObservation) {
    saveObservation(sessionStorageOrUndefined(), observation);
    setObservations((current) => new Map(current).set(report.id, observation));
    setHistory((current) => mergeRuns(current, [report]));
  }

  async function run(strategy: LabStrategy) {
    if (!listed || claimed.current.storm || claimed.current.race) return;
    claimed.current.storm = true;
    setError(null);
    try {
      await storm(strategy);
    } catch (failure) {
      setError(failure instanceof Error ? failure.message : String(failure));
    } finally {
      claimed.current.storm = false;
    }
  }

  /** One storm, start to report; throws what went wrong. */
  async function storm(strategy: LabStrategy) {
    setRunning(strategy);
    try {
      const started = await startLabRun(fetchFromPage, { strategy, size });
      const observation = await fireStorm(
        fetchFromPage,
        browserStormTiming(),
        started.id,
        started.request,
        size,
      );
      recordRun(await fetchStormReport(fetchFromPage, started.id), observation);
    } finally {
      setRunning(null);
    }
  }

  async function crash(strategy: LabStrategy) {
    if (!listed || claimed.current.race || claimed.current.crashes.has(strategy)) return;
    setError(null);
    try {
      await crashRun(strategy);
    } catch (failure) {
      setError(failure instanceof Error ? failure.message : String(failure));
    }
  }

  /** One crash scenario, start to report; throws what went wrong. */
  async function crashRun(strategy: LabStrategy) {
    claimed.current.crashes.add(strategy);
    setCrashing((current) => ({ ...current, [strategy]: [] }));
    try {
      const started = await startLabRun(fetchFromPage, { strategy, kind: "crash" });
      if (!started.crash) throw new Error("The server started a storm, not a crash scenario");
      const observation = await runCrashScenario(
        crashDeps,
        { stormId: started.id, request: started.request, crash: started.crash },
        (attempts) => setCrashing((current) => ({ ...current, [strategy]: attempts })),
      );
      recordRun(await fetchStormReport(fetchFromPage, started.id), observation);
    } finally {
      claimed.current.crashes.delete(strategy);
      setCrashing((current) => {
        const others = { ...current };
        delete others[strategy];
        return others;
      });
    }
  }

  /** "Crash every strategy": every design this server runs and is not crashing now, side by side, once. */
  async function crashAll() {
    const { current } = claimed;
    if (!listed || current.race || current.crashBatch) return;
    const idle = LAB_STRATEGIES.filter(
      (strategy) => available(strategy) && !current.crashes.has(strategy),
    );
    if (idle.length === 0) return;
    current.crashBatch = true;
    try {
      await crashSideBySide(idle, crash, setCrashBatch);
    } finally {
      current.crashBatch = false;
      setCrashBatch(null);
    }
  }

  /** Every design this server runs: a storm of the chosen size each, then the crash runs. */
  async function raceAll() {
    const { current } = claimed;
    if (!listed || current.race || current.storm || current.crashBatch) return;
    if (current.crashes.size > 0) return;
    current.race = true;
    setError(null);
    setRaced(null);
    setRace({ phase: "storms", strategy: LAB_STRATEGIES[0]!, index: 0, total: 0 });
    try {
      setRaced(
        await raceDesigns(LAB_STRATEGIES, {
          storm,
          crash: crashRun,
          available,
          onProgress: setRace,
        }),
      );
    } finally {
      current.race = false;
      setRace(null);
    }
  }

  // Every run the page knows of, once: each design's latest is picked from all of them.
  const known = useMemo(() => mergeRuns(designLatest, history), [designLatest, history]);
  const latest = (strategy: LabStrategy): LabRun | undefined => {
    const report = latestRun(known, strategy, "storm");
    if (!report) return undefined;
    const seen = observations.get(report.id);
    return { report, observation: isStormObservation(seen) ? seen : null };
  };
  const latestCrash = (strategy: LabStrategy): CrashRun | undefined => {
    const report = latestRun(known, strategy, "crash");
    if (!report) return undefined;
    const seen = observations.get(report.id);
    return { report, observation: isCrashObservation(seen) ? seen : null };
  };
  return {
    size,
    setSize,
    history,
    running,
    crashing,
    crashBatch,
    ready: listed,
    error,
    race,
    raced,
    run,
    crash,
    crashAll,
    raceAll,
    latest,
    latestCrash,
  };
}
