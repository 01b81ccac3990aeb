import { startAppServer, type AppServer } from "@/lib/testing/app-server";
import type { SoakOptions } from "@/lib/testing/soak/run";

/**
 * The built app as the soak runs it: the recovery worker and the reaper on
 * short intervals (they must work under load, not only in their own tests),
 * a short lease so abandoned keys come back quickly, the shortest TTL the
 * configuration allows so that keys expire and are reaped during the run,
 * and demo faults on for the server-side failures the traffic asks for.
 */
export const SOAK_APP = {
  leaseSeconds: 5,
  recoveryIntervalSeconds: 1,
  reaperIntervalSeconds: 5,
  ttlSeconds: 60,
} as const;

export async function startSoakApp(): Promise<AppServer> {
  return startAppServer({
    env: {
      IDEMPOTENCY_LEASE_SECONDS: String(SOAK_APP.leaseSeconds),
      IDEMPOTENCY_TTL_SECONDS: String(SOAK_APP.ttlSeconds),
      RECOVERY_INTERVAL_SECONDS: String(SOAK_APP.recoveryIntervalSeconds),
      REAPER_INTERVAL_SECONDS: String(SOAK_APP.reaperIntervalSeconds),
      DEMO_FAULTS: "on",
      LOG_LEVEL: "error",
      // The soak is a few clients sending far more than shoppers do; the
      // limiter still runs on every checkout, it just never refuses.
      CHECKOUT_RATE_LIMIT: "100000000",
      ACCOUNT_RATE_LIMIT: "100000000",
    },
  });
}

/** The soak's options for an app started by startSoakApp. */
export function soakOptionsFor(
  app: AppServer,
  run: Pick<SoakOptions, "durationMs" | "windowMs" | "concurrency" | "onWindow" | "trendLimits">,
): SoakOptions {
  return {
    ...run,
    baseUrl: app.baseUrl,
    databaseUrl: app.databaseUrl,
    paymentSimulator: app.paymentSimulator,
    processGroup: app.processGroup,
    // A lease, a recovery interval, and room for a provider fault on a busy machine.
    stuckAfterSeconds: SOAK_APP.leaseSeconds + SOAK_APP.recoveryIntervalSeconds + 10,
    // Well inside the TTL: a key replayed later could have expired, and then it is a new purchase.
    replayWindowMs: (SOAK_APP.ttlSeconds / 2) * 1000,
  };
}
