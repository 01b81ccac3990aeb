"use client";

import { useEffect, useState } from "react";
import { loadObservations, saveObservation } from "@/lib/client/lab-observations";
import { browserStormTiming, fetchStormReport, fireStorm, listStormReports, startStorm, type StormObservation, type StormReport } from "@/lib/client/lab-storm";
import type { LabStrategy } from "@/lib/lab/strategies";

/** One storm as the page shows it: the server's report, and what this browser saw of it (if it fired it). */
export interface LabRun {
  report: StormReport;
  observation: StormObservation | null;
}

function sessionStorageOrUndefined(): Storage | undefined {
  try {
    return window.sessionStorage;
  } catch {
    return undefined;
  }
}

const fetchFromPage = (input: string, init: RequestInit) => window.fetch(input, init);

/**
 * The lab page's state: the storm size, the storm running now, and every
 * storm this browser's account has fired, newest first (from the server,
 * so a reload keeps them), with what the browser saw of each.
 */
export function useStrategyLab(sizes: readonly number[]) {
  const [size, setSize] = useState(sizes.includes(10) ? 10 : sizes[0]!);
  const [runs, setRuns] = useState<LabRun[]>([]);
  const [running, setRunning] = useState<LabStrategy | null>(null);
  const [error, setError] = useState<string | null>(null);
  // Storms start only once the earlier ones are listed, so a listing can
  // never show a storm of this page's that is still on its way.
  const [listed, setListed] = useState(false);

  useEffect(() => {
    let cancelled = false;
    listStormReports(fetchFromPage).then(
      (reports) => {
        if (cancelled) return;
        const observations = loadObservations(sessionStorageOrUndefined());
        setRuns(reports.map((report) => ({ report, observation: observations.get(report.id) ?? null })));
        setListed(true);
      },
      // Nothing to show; storms can still run (each reports itself).
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
      const storm = await startStorm(fetchFromPage, strategy, size);
      const observation = await fireStorm(fetchFromPage, browserStormTiming(), storm.id, storm.request, size);
      saveObservation(sessionStorageOrUndefined(), observation);
      const report = await fetchStormReport(fetchFromPage, storm.id);
      setRuns((current) => [{ report, observation }, ...current.filter((old) => old.report.id !== report.id)]);
    } catch (failure) {
      setError(failure instanceof Error ? failure.message : String(failure));
    } finally {
      setRunning(null);
    }
  }

  const latest = (strategy: LabStrategy) => runs.find((one) => one.report.strategy === strategy);
  return { size, setSize, runs, running, ready: listed, error, run, latest };
}
