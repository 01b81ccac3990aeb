/**
 * The attempts of one intent, as the timeline shows them: every attempt with
 * its X-Request-Id, status, replay flag and duration, numbered across all the
 * runs that sent the intent's key (a double-click starts two runs; a reload
 * ends one and starts another). Pure functions over an immutable list, so
 * React state and sessionStorage can both hold it.
 */
import type { AttemptInfo } from "./checkout";

export interface LoggedAttempt {
  /** 1-based position within the intent. */
  seq: number;
  /** Which run of the intent sent it (1-based), and its number within that run. */
  run: number;
  runAttempt: number;
  /** "interrupted": the page was reloaded or closed before this attempt had an answer. */
  state: "sending" | "done" | "interrupted";
  status: number | null;
  failure: "timeout" | "network" | null;
  requestId: string | null;
  replayed: boolean;
  /** The server waited for the key's first attempt before it answered (Prefer: wait). */
  waited: boolean;
  durationMs: number | null;
  orderId: string | null;
  retryInMs: number | null;
}

export type AttemptLog = readonly LoggedAttempt[];

export function startAttempt(log: AttemptLog, run: number, runAttempt: number): AttemptLog {
  const entry: LoggedAttempt = {
    seq: log.length + 1,
    run,
    runAttempt,
    state: "sending",
    status: null,
    failure: null,
    requestId: null,
    replayed: false,
    waited: false,
    durationMs: null,
    orderId: null,
    retryInMs: null,
  };
  return [...log, entry];
}

export function finishAttempt(log: AttemptLog, run: number, info: AttemptInfo): AttemptLog {
  const known = log.some((entry) => entry.run === run && entry.runAttempt === info.n);
  // Tolerate a finish without a start (the caller may only listen for finishes).
  const withEntry = known ? log : startAttempt(log, run, info.n);
  return withEntry.map((entry) =>
    entry.run === run && entry.runAttempt === info.n
      ? {
          ...entry,
          state: "done",
          status: info.status,
          failure: info.failure,
          requestId: info.requestId,
          replayed: info.replayed,
          waited: info.waited,
          durationMs: info.durationMs,
          orderId: info.orderId,
          retryInMs: info.retryInMs,
        }
      : entry,
  );
}

/** The page is going away (reload, navigation): this attempt's answer will never reach it. */
export function interruptAttempt(log: AttemptLog, run: number, runAttempt: number): AttemptLog {
  return log.map((entry) =>
    entry.run === run && entry.runAttempt === runAttempt
      ? { ...entry, state: "interrupted", durationMs: null, retryInMs: null }
      : entry,
  );
}

/** After a reload: attempts that were still waiting for an answer will never get one in this page. */
export function markInterrupted(log: AttemptLog): AttemptLog {
  return log.map((entry) =>
    entry.state === "sending" ? { ...entry, state: "interrupted", retryInMs: null } : entry,
  );
}

/** The next run number for this intent. */
export function nextRun(log: AttemptLog): number {
  return log.reduce((max, entry) => Math.max(max, entry.run), 0) + 1;
}

export interface AttemptSummary {
  attempts: number;
  replays: number;
  /** Distinct orders the answers named: 1 for a working intent, however many attempts it took. */
  orders: number;
}

export function summarize(log: AttemptLog): AttemptSummary {
  return {
    attempts: log.length,
    replays: log.filter((entry) => entry.replayed).length,
    orders: new Set(log.flatMap((entry) => (entry.orderId ? [entry.orderId] : []))).size,
  };
}

function isLoggedAttempt(value: unknown): value is LoggedAttempt {
  if (typeof value !== "object" || value === null) return false;
  const entry = value as Record<string, unknown>;
  return (
    typeof entry.seq === "number" &&
    typeof entry.run === "number" &&
    typeof entry.runAttempt === "number" &&
    (entry.state === "sending" || entry.state === "done" || entry.state === "interrupted")
  );
}

/** A log read back from storage, or an empty one if it is not a log. */
export function parseAttemptLog(value: unknown): AttemptLog {
  if (!Array.isArray(value) || !value.every(isLoggedAttempt)) return [];
  // Entries saved before `waited` existed did not wait.
  return value.map((entry) => ({ ...entry, waited: entry.waited === true }));
}
