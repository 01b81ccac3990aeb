import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";
import type { RecoveryReport } from "@oncepay/idempotency";
import { CHECKOUT_OUTCOMES, type CheckoutOutcome } from "@/lib/observability/checkout-outcomes";

/**
 * This instance's metrics, in Prometheus's text format at GET /api/metrics.
 * Every instance keeps its own (the counters count what it served); a
 * scraper reads each instance and sums. Cached on globalThis so a dev-mode
 * reload does not register every metric twice.
 */
interface Metrics {
  registry: Registry;
  checkoutOutcomes: Counter<"outcome">;
  checkoutDuration: Histogram<"outcome">;
  keysInFlight: Gauge;
  keyWaiters: Gauge;
  keyListenerUp: Gauge;
  recoveryRuns: Counter<"result">;
  recoveredKeys: Counter<"result">;
  reaperRuns: Counter<"result">;
  reapedKeys: Counter;
  readinessProbes: Counter<"result">;
}

const globalForMetrics = globalThis as typeof globalThis & { oncepayMetrics?: Metrics };

export function metrics(): Metrics {
  globalForMetrics.oncepayMetrics ??= createMetrics();
  return globalForMetrics.oncepayMetrics;
}

function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const checkoutOutcomes = new Counter({
    name: "oncepay_checkout_outcomes_total",
    help: "POST /api/orders answers by outcome, as this instance served them.",
    labelNames: ["outcome"] as const,
    registers: [registry],
  });
  const checkoutDuration = new Histogram({
    name: "oncepay_checkout_duration_seconds",
    help: "Time to answer POST /api/orders, by outcome.",
    labelNames: ["outcome"] as const,
    // From a replay (a few ms) to a payment held by the slow-network demo (seconds).
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  // Every outcome shows from the first scrape, at 0, so a rate() over a
  // label that has not happened yet is 0 rather than missing.
  for (const outcome of CHECKOUT_OUTCOMES) {
    checkoutOutcomes.inc({ outcome }, 0);
    checkoutDuration.zero({ outcome });
  }
  // Set at each scrape (lib/api/operations.ts), from the shared key table.
  const keysInFlight = new Gauge({
    name: "oncepay_idempotency_keys_in_flight",
    help: "Idempotency keys in flight in the database at scrape time (all instances' together: the key table is shared); NaN if the database did not answer.",
    registers: [registry],
  });
  // Set at each scrape, from this instance's own waiters.
  const keyWaiters = new Gauge({
    name: "oncepay_key_waiters",
    help: "Requests waiting on this instance for another attempt that holds their key (Prefer: wait), at scrape time.",
    registers: [registry],
  });
  const keyListenerUp = new Gauge({
    name: "oncepay_key_listener_up",
    help: "1 while waiting can be heard on this instance (its LISTEN connection is up, or it needs none); 0 while it is down, when nobody waits.",
    registers: [registry],
  });
  const recoveryRuns = labelledCounter(
    registry,
    "oncepay_recovery_runs_total",
    "Runs of this instance's recovery worker, by whether the run itself failed.",
    RUN_RESULTS,
  );
  const recoveredKeys = labelledCounter(
    registry,
    "oncepay_recovery_keys_total",
    "Abandoned keys this instance's recovery worker examined, by what it did with each.",
    RECOVERY_RESULTS,
  );
  const reaperRuns = labelledCounter(
    registry,
    "oncepay_reaper_runs_total",
    "Runs of this instance's reaper, by whether the run itself failed.",
    RUN_RESULTS,
  );
  const reapedKeys = new Counter({
    name: "oncepay_reaper_keys_deleted_total",
    help: "Expired keys this instance's reaper deleted.",
    registers: [registry],
  });
  const readinessProbes = labelledCounter(
    registry,
    "oncepay_readiness_probes_total",
    "Probes of this instance's readiness (its database), by result; one probe answers every GET /api/ready for a second.",
    READINESS_RESULTS,
  );
  return {
    registry,
    checkoutOutcomes,
    checkoutDuration,
    keysInFlight,
    keyWaiters,
    keyListenerUp,
    recoveryRuns,
    recoveredKeys,
    reaperRuns,
    reapedKeys,
    readinessProbes,
  };
}

/**
 * A counter with a `result` label whose every value shows from the first
 * scrape, at 0, so a rate() over one that has not happened yet is 0 rather
 * than missing.
 */
function labelledCounter(
  registry: Registry,
  name: string,
  help: string,
  results: readonly string[],
): Counter<"result"> {
  const counter = new Counter({
    name,
    help,
    labelNames: ["result"] as const,
    registers: [registry],
  });
  for (const result of results) counter.inc({ result }, 0);
  return counter;
}

const RUN_RESULTS = ["ok", "failed"] as const;

const READINESS_RESULTS = ["ready", "not_ready"] as const;

const RECOVERY_RESULTS = [
  "released",
  "completed",
  "skipped",
  "failed",
] as const satisfies readonly Exclude<keyof RecoveryReport, "examined">[];

export function observeCheckout(outcome: CheckoutOutcome, seconds: number): void {
  const { checkoutOutcomes, checkoutDuration } = metrics();
  checkoutOutcomes.labels(outcome).inc();
  checkoutDuration.labels(outcome).observe(seconds);
}

export function observeRecoveryRun(report: RecoveryReport | "failed"): void {
  const { recoveryRuns, recoveredKeys } = metrics();
  if (report === "failed") {
    recoveryRuns.labels("failed").inc();
    return;
  }
  recoveryRuns.labels("ok").inc();
  for (const result of RECOVERY_RESULTS) recoveredKeys.labels(result).inc(report[result]);
}

export function observeReaperRun(deleted: number | "failed"): void {
  const { reaperRuns, reapedKeys } = metrics();
  if (deleted === "failed") {
    reaperRuns.labels("failed").inc();
    return;
  }
  reaperRuns.labels("ok").inc();
  reapedKeys.inc(deleted);
}

export function observeReadinessProbe(ready: boolean): void {
  metrics()
    .readinessProbes.labels(ready ? "ready" : "not_ready")
    .inc();
}
