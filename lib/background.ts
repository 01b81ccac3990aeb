import { serverEnv } from "@/lib/env";
import { listenForKeyChanges } from "@oncepay/idempotency/pg";
import { reapExpiredKeys } from "@/lib/idempotency/reaper";
import { logReporter } from "@/lib/idempotency/shop-engine";
import { deleteEndedWindows } from "@/lib/limits/rate-limit";
import { errorFields, log } from "@/lib/log";
import { observeReaperRun, observeRecoveryRun } from "@/lib/observability/metrics";
import { settleStalePendingPayments } from "@/lib/payments/pending-recovery";
import { getServices } from "@/lib/services";

/**
 * The in-process background work: the recovery worker (of keys in flight,
 * and of payments still pending past their limit), the reaper (of
 * expired keys, and of rate-limit windows that have ended), each on its own
 * interval, and the listener that wakes this instance's waiters when
 * another instance commits their key. All are safe to run in several app
 * instances at once (see their modules), so nothing here elects a leader.
 */
export function startBackgroundWork(): void {
  const env = serverEnv();
  const services = getServices();
  if (env.KEY_LISTENER === "on")
    listenForKeyChanges({
      connection: { connectionString: env.DIRECT_DATABASE_URL ?? env.DATABASE_URL },
      waiters: services.keyWaiters,
      reporter: logReporter,
    });
  every(
    env.RECOVERY_INTERVAL_SECONDS,
    "recovery",
    () =>
      services.engine.recover({
        batchSize: env.RECOVERY_BATCH_SIZE,
        concurrency: env.RECOVERY_CONCURRENCY,
      }),
    observeRecoveryRun,
  );
  // Payments that wait on the shopper's bank, when no event settled them in time.
  every(
    env.RECOVERY_INTERVAL_SECONDS,
    "pending_payments",
    () =>
      settleStalePendingPayments(services.pool, services.paymentProvider, {
        olderThanSeconds: env.PENDING_PAYMENT_SETTLE_AFTER_SECONDS,
        batchSize: env.RECOVERY_BATCH_SIZE,
      }),
    () => undefined,
  );
  every(
    env.REAPER_INTERVAL_SECONDS,
    "reaper",
    () =>
      reapExpiredKeys(services.engine, {
        batchSize: env.REAPER_BATCH_SIZE,
        maxBatches: env.REAPER_MAX_BATCHES,
      }),
    observeReaperRun,
  );
  every(
    env.REAPER_INTERVAL_SECONDS,
    "rate_limit_reaper",
    () => deleteEndedWindows(services.pool),
    () => undefined,
  );
}

/** Runs `run` every `seconds` (0: never), and reports each run's result, or "failed", to `observe`. */
function every<Report>(
  seconds: number,
  name: string,
  run: () => Promise<Report>,
  observe: (result: Report | "failed") => void,
): void {
  if (seconds === 0) return;
  let running = false;
  const timer = setInterval(async () => {
    if (running) return; // a slow run is never overlapped by the next one
    running = true;
    try {
      observe(await run());
    } catch (error) {
      observe("failed");
      log.error(`${name}.failed`, errorFields(error));
    } finally {
      running = false;
    }
  }, seconds * 1000);
  timer.unref(); // never keeps the process alive on shutdown
}
