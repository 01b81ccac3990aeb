import { db } from "@/lib/db/client";
import { serverEnv } from "@/lib/env";
import { PostgresIdempotencyStore } from "@/lib/idempotency/postgres-store";
import { SimulatedPaymentProvider } from "@/lib/payments/simulated-provider";

/**
 * The composition root: the one place that picks concrete implementations.
 * Built on first use, so importing route modules (as `next build` does) opens
 * no connection.
 */
let services: ReturnType<typeof buildServices> | undefined;

function buildServices() {
  const env = serverEnv();
  const database = db();
  return {
    db: database,
    idempotencyStore: new PostgresIdempotencyStore(database, {
      leaseSeconds: env.IDEMPOTENCY_LEASE_SECONDS,
      ttlSeconds: env.IDEMPOTENCY_TTL_SECONDS,
    }),
    paymentProvider: new SimulatedPaymentProvider(),
  };
}

export function getServices() {
  services ??= buildServices();
  return services;
}
