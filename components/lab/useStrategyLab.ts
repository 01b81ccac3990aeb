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
import type { LabStrategy } from "@/lib/lab/strategies";

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
export function useStrategyLab(sizes: readonly number[]) {
  const [size, setSize] = useState(sizes.includes(10) ? 10 : sizes[0]!);
  const [runs, setRuns] = useState<LabRun[]>([]);
  const [crashes, setCrashes] = useState<CrashRun[]>([]);
  const [running, setRunning] = useState<LabStrategy | null>(null);
  // Crash scenarios run side by side, each for as long as its key stays in progress.
  const [crashing, setCrashing] = useState<Partial<Record<LabStrategy, CrashAttempt[]>>>({});
  const [error, setError] = useState<string | null>(null);
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
    if (running || !listed) return;
    setRunning(strategy);
    setError(null);
    try {
      const storm = await startLabRun(fetchFromPage, { strategy, size });
      const observation = await fireStorm(
        fetchFromPage,
        browserStormTiming(),
        storm.id,
        storm.request,
        size,
      );
      saveObservation(sessionStorageOrUndefined(), observation);
      const report = await fetchStormReport(fetchFromPage, storm.id);
      setRuns((current) =>
        newestFirst([
          { report, observation },
          ...current.filter((old) => old.report.id !== report.id),
        ]),
      );
    } catch (failure) {
      setError(failure instanceof Error ? failure.message : String(failure));
    } finally {
      setRunning(null);
    }
  }

  async function crash(strategy: LabStrategy) {
    if (!listed || crashing[strategy]) return;
    setCrashing((current) => ({ ...current, [strategy]: [] }));
    setError(null);
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
    } catch (failure) {
      setError(failure instanceof Error ? failure.message : String(failure));
    } finally {
      setCrashing((current) => {
        const others = { ...current };
        delete others[strategy];
        return others;
      });
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
    run,
    crash,
    latest,
    latestCrash,
  };
}
