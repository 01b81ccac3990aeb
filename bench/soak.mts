/**
 * npm run soak: mixed checkout traffic against the built app for 10 minutes
 * (`--minutes N` to change), with provider failures, the recovery worker and
 * the reaper running, and the invariants checked all along (see
 * lib/testing/soak/). Prints one line a minute (throughput, p50/p99, the
 * Next.js server's memory, keys in flight, invariants) and exits 1 if any
 * invariant broke or memory or p99 trended upward. Run it on PostgreSQL:
 *
 *   npm run build && DATABASE_URL=postgresql://postgres@127.0.0.1:5432/oncepay npm run soak
 */
import { startSoakApp, soakOptionsFor } from "../lib/testing/soak/app.ts";
import { formatWindow, SOAK_TREND_LIMITS, WINDOW_HEADER } from "../lib/testing/soak/report.ts";
import { runSoak } from "../lib/testing/soak/run.ts";

const minutesFlag = process.argv.indexOf("--minutes");
const minutes = minutesFlag === -1 ? 10 : Number(process.argv[minutesFlag + 1]);
if (!Number.isFinite(minutes) || minutes <= 0) {
  console.error("usage: npm run soak [-- --minutes N]");
  process.exit(2);
}
if (!process.env.DATABASE_URL) {
  console.warn(
    "[soak] DATABASE_URL is not set: running on the embedded PGlite, which runs one statement at a time; the figures will say little about PostgreSQL.",
  );
}

const app = await startSoakApp();
console.log(
  `[soak] ${minutes} min against ${app.baseUrl} (${app.realPostgres ? "PostgreSQL" : "PGlite"}), 8 shoppers at once`,
);
console.log(WINDOW_HEADER);
try {
  const result = await runSoak(
    soakOptionsFor(app, {
      durationMs: minutes * 60_000,
      windowMs: 60_000,
      concurrency: 8,
      trendLimits: SOAK_TREND_LIMITS,
      onWindow: (window) => console.log(formatWindow(window, `min ${window.index}`)),
    }),
  );
  const total = result.windows.reduce((sum, window) => sum + window.requests, 0);
  console.log(
    `[soak] ${total} requests; settled: ${result.settled.succeededCharges} successful charges for ${result.settled.succeededPayments} payments, ` +
      `${result.settled.failedCharges} declined for ${result.settled.declinedPayments}, ${result.settled.inFlightKeys} keys in flight`,
  );
  if (result.failures.length > 0) {
    console.error(`[soak] FAILED:\n  ${result.failures.join("\n  ")}`);
    process.exitCode = 1;
  } else {
    console.log("[soak] passed: every invariant held, memory and p99 flat");
  }
} finally {
  await app.stop();
}
