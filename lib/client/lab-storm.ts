/**
 * The strategy lab's storm, browser side and framework-free: ask the server
 * for a storm (it mints the intent and says what to send), fire that request
 * N times at once, and report what came back and how many were really on the
 * wire together. What the storm did (orders, charges, money) is the server's
 * report, never counted here.
 */
import { IDEMPOTENT_REPLAYED_HEADER } from "@/lib/http/headers";
import type { LabStrategy } from "@/lib/lab/strategies";
import type { StormReport, StormRequest } from "@/lib/lab/storms";
import { toProblem } from "@/lib/client/api-types";
import type { FetchLike } from "@/lib/client/attempt";

export type { StormReport };

/** What the browser saw of one storm: only facts the server cannot know. */
export interface StormObservation {
  stormId: string;
  sent: number;
  /** Each distinct answer and how many got it, most common first. */
  statuses: StatusCount[];
  /**
   * The most requests on the wire at the same moment, from the browser's
   * Resource Timing (request sent → response ended); null where the browser
   * gives no timings. Over HTTP/1.1 Chromium opens at most 6 connections to
   * one server, so the rest of a storm waits in the browser's queue.
   */
  peakInFlight: number | null;
  /**
   * What the storm went over, as Resource Timing names it ("h2",
   * "http/1.1"), the most common among its requests; null without timings.
   */
  protocol: string | null;
  durationMs: number;
}

export interface StatusCount {
  /** "201", "201 replayed", "409", "network error" */
  label: string;
  count: number;
}

export interface StormTiming {
  /** performance.now() */
  now(): number;
  /** The Resource Timing entries of requests to `url` that started at or after `since`. */
  entriesFor(url: string, since: number): TimedRequest[];
  /** Makes room for `count` more entries (the buffer holds 250 by default). */
  reserve(count: number): void;
}

export interface TimedRequest {
  requestStart: number;
  responseEnd: number;
  /** nextHopProtocol: "h2", "http/1.1", or "" where the browser does not say. */
  protocol: string;
}

export class StormError extends Error {}

/** Starts a storm ({strategy, size}) or a crash scenario ({strategy, kind: "crash"}): the server mints its intent and says what to send. */
export async function startLabRun(
  fetch: FetchLike,
  run: { strategy: LabStrategy; size: number } | { strategy: LabStrategy; kind: "crash" },
): Promise<StormReport> {
  const response = await fetch("/api/lab/storms", {
    method: "POST",
    credentials: "same-origin",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(run),
  });
  const json: unknown = await response.json().catch(() => null);
  if (response.status !== 201)
    throw new StormError(toProblem(json, response.status, response.statusText).detail);
  return json as StormReport;
}

export async function fetchStormReport(fetch: FetchLike, stormId: string): Promise<StormReport> {
  const response = await fetch(`/api/lab/storms/${encodeURIComponent(stormId)}`, {
    method: "GET",
    credentials: "same-origin",
  });
  const json: unknown = await response.json().catch(() => null);
  if (response.status !== 200)
    throw new StormError(toProblem(json, response.status, response.statusText).detail);
  return json as StormReport;
}

/** The account's latest 20 runs, newest first. */
export async function listStormReports(fetch: FetchLike): Promise<StormReport[]> {
  return listReports(fetch, "/api/lab/storms");
}

/** Each design's latest storm and latest crash run, however many runs came since. */
export async function listLatestRunsOfEachDesign(fetch: FetchLike): Promise<StormReport[]> {
  return listReports(fetch, "/api/lab/latest-runs");
}

async function listReports(fetch: FetchLike, path: string): Promise<StormReport[]> {
  const response = await fetch(path, { method: "GET", credentials: "same-origin" });
  const json: unknown = await response.json().catch(() => null);
  if (response.status !== 200)
    throw new StormError(toProblem(json, response.status, response.statusText).detail);
  return (json as { data: StormReport[] }).data;
}

/**
 * Fires `size` copies of the request together: every fetch is started in
 * one synchronous loop before any answer is awaited, so they overlap as far
 * as the browser lets them. Each body is read to the end, so its timing is
 * complete and its connection free again.
 */
export async function fireStorm(
  fetch: FetchLike,
  timing: StormTiming,
  stormId: string,
  request: StormRequest,
  size: number,
): Promise<StormObservation> {
  timing.reserve(size);
  const body = JSON.stringify(request.body);
  const startedAt = timing.now();
  const sends: Promise<string>[] = [];
  for (let i = 0; i < size; i++) {
    sends.push(
      fetch(request.path, {
        method: request.method,
        credentials: "same-origin",
        headers: request.headers,
        body,
      }).then(labelOf, () => "network error"),
    );
  }
  const labels = await Promise.all(sends);
  const durationMs = Math.round(timing.now() - startedAt);
  const answered = labels.filter((label) => label !== "network error").length;
  const timed = await timedRequests(timing, request.path, startedAt, answered);
  return {
    stormId,
    sent: size,
    statuses: countStatuses(labels),
    peakInFlight:
      timed.length === 0
        ? null
        : peakOverlap(
            timed.map((entry) => ({ start: entry.requestStart, end: entry.responseEnd })),
          ),
    protocol: mostCommon(timed.map((entry) => entry.protocol).filter(Boolean)),
    durationMs,
  };
}

/**
 * An answer as the lab shows it: its status, marked when it is a replay.
 * The body is read to the end, so the request's timing is complete and its
 * connection free; a body that breaks off is no answer ("network error").
 */
export async function labelOf(response: Response): Promise<string> {
  try {
    await response.text();
  } catch {
    return "network error";
  }
  return response.headers.get(IDEMPOTENT_REPLAYED_HEADER) === "true"
    ? `${response.status} replayed`
    : String(response.status);
}

export function countStatuses(labels: readonly string[]): StatusCount[] {
  const counts = new Map<string, number>();
  for (const label of labels) counts.set(label, (counts.get(label) ?? 0) + 1);
  return [...counts]
    .map(([label, count]) => ({ label, count }))
    .sort((a, b) => b.count - a.count || a.label.localeCompare(b.label));
}

/** The most intervals that hold one moment in common (an end and a start at the same instant do not overlap). */
export function peakOverlap(intervals: readonly { start: number; end: number }[]): number {
  const events = intervals.flatMap(({ start, end }) => [
    { at: start, change: 1 },
    { at: end, change: -1 },
  ]);
  events.sort((a, b) => a.at - b.at || a.change - b.change);
  let current = 0;
  let peak = 0;
  for (const event of events) {
    current += event.change;
    peak = Math.max(peak, current);
  }
  return peak;
}

// Resource Timing entries are added a moment after a response ends: wait
// briefly for all of them rather than count too few.
const TIMING_WAIT_MS = 1000;

/** The storm's requests with complete timings, once the browser has them all (or a second has passed). */
async function timedRequests(
  timing: StormTiming,
  path: string,
  since: number,
  answered: number,
): Promise<TimedRequest[]> {
  const deadline = timing.now() + TIMING_WAIT_MS;
  let entries = timing.entriesFor(path, since);
  while (entries.length < answered && timing.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    entries = timing.entriesFor(path, since);
  }
  return entries.filter(
    (entry) => entry.requestStart > 0 && entry.responseEnd >= entry.requestStart,
  );
}

/** "h2" → "HTTP/2", as people say it; an unknown token as it came. */
export function protocolName(protocol: string): string {
  const names: Record<string, string> = { h2: "HTTP/2", h3: "HTTP/3", "http/1.1": "HTTP/1.1" };
  return names[protocol] ?? protocol;
}

function mostCommon(values: readonly string[]): string | null {
  const counts = new Map<string, number>();
  for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1);
  return [...counts].sort((a, b) => b[1] - a[1])[0]?.[0] ?? null;
}

/** The browser's own clock and Resource Timing. */
export function browserStormTiming(): StormTiming {
  return {
    now: () => performance.now(),
    entriesFor(path, since) {
      const url = new URL(path, window.location.href).href;
      return (performance.getEntriesByName(url, "resource") as PerformanceResourceTiming[])
        .filter((entry) => entry.startTime >= since)
        .map((entry) => ({
          requestStart: entry.requestStart,
          responseEnd: entry.responseEnd,
          protocol: entry.nextHopProtocol,
        }));
    },
    reserve(count) {
      performance.clearResourceTimings();
      performance.setResourceTimingBufferSize(Math.max(250, count + 50));
    },
  };
}
