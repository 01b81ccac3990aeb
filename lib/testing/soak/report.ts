/**
 * The soak's windows (a minute each in `npm run soak`, shorter in the test)
 * and the two trends that must not rise: the app's memory and its p99.
 */
export interface Window {
  index: number;
  requests: number;
  seconds: number;
  p50Ms: number;
  p99Ms: number;
  rssMb: number;
  /** Keys in flight at the window's end (work the recovery worker may still have). */
  inFlightKeys: number;
  breaches: string[];
}

export function percentile(sortedMs: number[], q: number): number {
  if (sortedMs.length === 0) return 0;
  return sortedMs[Math.min(sortedMs.length - 1, Math.floor(q * sortedMs.length))]!;
}

/**
 * How much a series rose from its first half to its second, as a fraction
 * of the first (0.1 = 10% higher). The first window is left out: Node.js
 * grows its heap and compiles the hot paths then, which is warm-up, not a
 * leak.
 */
export function rise(series: number[]): number {
  const steady = series.slice(1);
  if (steady.length < 2) return 0;
  const half = Math.floor(steady.length / 2);
  const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;
  const first = mean(steady.slice(0, half));
  const last = mean(steady.slice(steady.length - half));
  return first === 0 ? 0 : (last - first) / first;
}

/**
 * The limits: memory may wobble with garbage collection, not grow; p99 on a
 * shared 2-core machine is noisier, so it gets more room. Both are far below
 * what a leak or a queue that never drains produces over ten minutes.
 */
export const MAX_RSS_RISE = 0.25;
export const MAX_P99_RISE = 1.0;

export interface TrendLimits {
  rss: number;
  p99: number;
}

export const SOAK_TREND_LIMITS: TrendLimits = { rss: MAX_RSS_RISE, p99: MAX_P99_RISE };

export function trendBreaches(
  windows: Window[],
  limits: TrendLimits = SOAK_TREND_LIMITS,
): string[] {
  const found: string[] = [];
  const rss = rise(windows.map((window) => window.rssMb));
  const p99 = rise(windows.map((window) => window.p99Ms));
  if (rss > limits.rss)
    found.push(`RSS rose ${(rss * 100).toFixed(0)}% (limit ${limits.rss * 100}%)`);
  if (p99 > limits.p99)
    found.push(`p99 rose ${(p99 * 100).toFixed(0)}% (limit ${limits.p99 * 100}%)`);
  return found;
}

export function formatWindow(window: Window, label: string): string {
  return [
    label.padEnd(8),
    String(window.requests).padStart(9),
    (window.requests / window.seconds).toFixed(0).padStart(7),
    window.p50Ms.toFixed(1).padStart(8),
    window.p99Ms.toFixed(1).padStart(8),
    window.rssMb.toFixed(0).padStart(7),
    String(window.inFlightKeys).padStart(9),
    `  ${window.breaches.join("; ") || "ok"}`,
  ].join(" ");
}

export const WINDOW_HEADER =
  "window    requests   req/s   p50 ms   p99 ms  RSS MB  in flight  invariants";
