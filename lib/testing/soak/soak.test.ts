import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AppServer } from "@/lib/testing/app-server";
import { startSoakApp, soakOptionsFor } from "@/lib/testing/soak/app";
import { formatWindow, WINDOW_HEADER } from "@/lib/testing/soak/report";
import { runSoak } from "@/lib/testing/soak/run";

/**
 * The short soak of `npm test`: 20 seconds of mixed traffic in 5-second
 * windows, with the invariants checked in every window and once the keys
 * have settled. Whether memory or p99 trends upward is `npm run soak`'s
 * question (ten minutes, one-minute windows): a trend means something only
 * over minutes on a machine doing nothing else, and a test run is neither.
 */
const DURATION_MS = 20_000;
const WINDOW_MS = 5_000;
let app: AppServer;

beforeAll(async () => {
  app = await startSoakApp();
});
afterAll(async () => {
  await app?.stop();
});

describe("mixed traffic, with provider failures, the recovery worker and the reaper running", () => {
  it(
    "keeps every invariant and settles every key",
    { timeout: DURATION_MS + 120_000 },
    async () => {
      const lines: string[] = [WINDOW_HEADER];
      const result = await runSoak(
        soakOptionsFor(app, {
          durationMs: DURATION_MS,
          windowMs: WINDOW_MS,
          concurrency: 6,
          onWindow: (window) =>
            lines.push(formatWindow(window, `${(window.index * WINDOW_MS) / 1000} s`)),
        }),
      );
      console.info(
        `[soak]\n${lines.join("\n")}\n[soak] settled: ${JSON.stringify(result.settled)}`,
      );

      expect(result.failures).toEqual([]);
      expect(result.windows.reduce((sum, window) => sum + window.requests, 0)).toBeGreaterThan(0);
      expect(result.settled.succeededCharges).toBeGreaterThan(0);
      expect(result.settled.succeededCharges).toBe(result.settled.succeededPayments);
    },
  );
});
