import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AppServer } from "@/lib/testing/app-server";
import { startSoakApp, soakOptionsFor } from "@/lib/testing/soak/app";
import { formatWindow, WINDOW_HEADER } from "@/lib/testing/soak/report";
import { runSoak } from "@/lib/testing/soak/run";

/**
 * The short soak of `npm test`: a minute of mixed traffic in 10-second
 * windows (`npm run soak` runs ten minutes in one-minute windows, with the
 * strict trend limits). In its first minute a Node.js server is still
 * growing its heap to the load, so here memory and p99 may rise more; a
 * leak or a queue that never drains still shows as far more than that.
 */
const DURATION_MS = 60_000;
const FIRST_MINUTE_TREND_LIMITS = { rss: 0.5, p99: 2.0 };
let app: AppServer;

beforeAll(async () => {
  app = await startSoakApp();
});
afterAll(async () => {
  await app?.stop();
});

describe("a minute of mixed traffic, with provider failures, the recovery worker and the reaper running", () => {
  it(
    "keeps every invariant, settles every key, and neither memory nor p99 trends upward",
    { timeout: DURATION_MS + 120_000 },
    async () => {
      const lines: string[] = [WINDOW_HEADER];
      const result = await runSoak(
        soakOptionsFor(app, {
          durationMs: DURATION_MS,
          windowMs: 10_000,
          concurrency: 6,
          trendLimits: FIRST_MINUTE_TREND_LIMITS,
          onWindow: (window) => lines.push(formatWindow(window, `${window.index * 10} s`)),
        }),
      );
      console.info(
        `[soak]\n${lines.join("\n")}\n[soak] settled: ${JSON.stringify(result.settled)}`,
      );

      expect(result.failures).toEqual([]);
      expect(result.windows.reduce((sum, window) => sum + window.requests, 0)).toBeGreaterThan(100);
      expect(result.settled.succeededCharges).toBeGreaterThan(0);
      expect(result.settled.succeededCharges).toBe(result.settled.succeededPayments);
    },
  );
});
