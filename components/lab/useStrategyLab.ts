"use client";

import { useEffect, useState } from "react";
import { runCrashScenario, type CrashAttempt, type CrashObservation } from "@/lib/client/lab-crash";
import {
  isCrashObservation,
  isStormObservation,
  loadObservations,
  saveObservation,
} from "@/lib/client/lab-observations";
import {
  browserStormTiming,
  fetchStormReport,
  fireStorm,
  listStormReports,
  startLabRun,
  type StormObservation,
  type StormReport,
} from "@/lib/client/lab-storm";
import { raceDesigns, type RaceProgress, type RaceResult } from "@/lib/lab/race";
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

const newestFirst = <T extends { report: StormReport }>(runs: T[]) =>
  [...runs].sort((a, b) => b.report.createdAt.localeCompare(a.report.createdAt));

/**
 * The lab page's state: the storm size, the runs going on now, and every
 * storm and crash scenario this browser's account has run, newest first
 * (from the server, so a reload keeps them), with what the browser saw of
 * each.
 */
export function useStrategyLab(
  sizes: readonly number[],
  available: (strategy: LabStrategy) => boolean,
) {
  const [size, setSize] = useState(sizes.includes(10) ? 10 : sizes[0]!);
  const [runs, setRuns] = useState<LabRun[]>([]);
  const [crashes, setCrashes] = useState<CrashRun[]>([]);
  const [running, setRunning] = useState<LabStrategy | null>(null);
  // Crash scenarios run side by side, each for as long as its key stays in progress.
  const [crashing, setCrashing] = useState<Partial<Record<LabStrategy, CrashAttempt[]>>>({});
  const [error, setError] = useState<string | null>(null);
  // "Race all seven": where it is now, and, once over, what it could not run.
  const [race, setRace] = useState<RaceProgress | null>(null);
  const [raced, setRaced] = useState<RaceResult | null>(null);
  // Runs start only once the earlier ones are listed, so a listing can
  // never show one of this page's runs that is still on its way.
  const [listed, setListed] = useState(false);

  useEffect(() => {
    let cancelled = false;
    listStormReports(fetchFromPage).then(
      (reports) => {
        if (cancelled) return;
        const observations = loadObservations(sessionStorageOrUndefined());
        const seen = (report: StormReport) => observations.get(report.id);
        setRuns(
          reports
            .filter((report) => report.kind === "storm")
            .map((report) => ({
              report,
              observation: isStormObservation(seen(report))
                ? (seen(report) as StormObservation)
                : null,
            })),
        );
        setCrashes(
          reports
            .filter((report) => report.kind === "crash")
            .map((report) => ({
              report,
              observation: isCrashObservation(seen(report))
                ? (seen(report) as CrashObservation)
                : null,
            })),
        );
        setListed(true);
      },
      // Nothing to show; runs can still start (each reports itself).
      () => {
        if (!cancelled) setListed(true);
      },
    );
    return () => {
      cancelled = true;
    };
  }, []);

  async function run(strategy: LabStrategy) {
    if (running || race || !listed) return;
    setError(null);
    try {
      await storm(strategy);
    } catch (failure) {
      setError(failure instanceof Error ? failure.message : String(failure));
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
      saveObservation(sessionStorageOrUndefined(), observation);
      const report = await fetchStormReport(fetchFromPage, started.id);
      setRuns((current) =>
        newestFirst([
          { report, observation },
          ...current.filter((old) => old.report.id !== report.id),
        ]),
      );
    } finally {
      setRunning(null);
    }
  }

  async function crash(strategy: LabStrategy) {
    if (!listed || race || crashing[strategy]) return;
    setError(null);
    try {
      await crashRun(strategy);
    } catch (failure) {
      setError(failure instanceof Error ? failure.message : String(failure));
    }
  }

  /** One crash scenario, start to report; throws what went wrong. */
  async function crashRun(strategy: LabStrategy) {
    setCrashing((current) => ({ ...current, [strategy]: [] }));
    try {
      const started = await startLabRun(fetchFromPage, { strategy, kind: "crash" });
      if (!started.crash) throw new Error("The server started a storm, not a crash scenario");
      const observation = await runCrashScenario(
        crashDeps,
        { stormId: started.id, request: started.request, crash: started.crash },
        (attempts) => setCrashing((current) => ({ ...current, [strategy]: attempts })),
      );
      saveObservation(sessionStorageOrUndefined(), observation);
      const report = await fetchStormReport(fetchFromPage, started.id);
      setCrashes((current) =>
        newestFirst([
          { report, observation },
          ...current.filter((old) => old.report.id !== report.id),
        ]),
      );
    } finally {
      setCrashing((current) => {
        const others = { ...current };
        delete others[strategy];
        return others;
      });
    }
  }

  /** Every design this server runs: a storm of the chosen size each, then the crash runs. */
  async function raceAll() {
    if (!listed || race || running || Object.keys(crashing).length > 0) return;
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
      setRace(null);
    }
  }

  const latest = (strategy: LabStrategy) => runs.find((one) => one.report.strategy === strategy);
  const latestCrash = (strategy: LabStrategy) =>
    crashes.find((one) => one.report.strategy === strategy);
  return {
    size,
    setSize,
    runs,
    crashes,
    running,
    crashing,
    ready: listed,
    error,
    race,
    raced,
    run,
    crash,
    raceAll,
    latest,
    latestCrash,
  };
}
