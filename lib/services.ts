import { db, sqlPool } from "@/lib/db/client";
import type { GatedRows } from "@/lib/db/sql";
import { statementsOn } from "@/lib/db/statements";
import { serverEnv } from "@/lib/env";
import type { IdempotentEndpoint } from "@/lib/idempotency/idempotent-endpoint";
import { PostgresIdempotencyStore } from "@/lib/idempotency/postgres-store";
import { postgresRateLimit } from "@/lib/limits/rate-limit";
import { checkoutEndpoint } from "@/lib/orders/checkout";
import { StripePaymentProvider } from "@/lib/payments/stripe-provider";

/**
 * The composition root: the one place that picks concrete implementations.
 * Built on first use, so importing route modules (as `next build` does) opens
 * no connection.
 */
let services: ReturnType<typeof buildServices> | undefined;

function buildServices() {
  const env = serverEnv();
  const database = db();
  const pool = sqlPool();
  const statements = statementsOn(
    pool,
    env.DATABASE_STATEMENTS ?? (env.DIRECT_DATABASE_URL ? "unnamed" : "prepared"),
  );
  const idempotencyStore = new PostgresIdempotencyStore(statements, {
    leaseSeconds: env.IDEMPOTENCY_LEASE_SECONDS,
    ttlSeconds: env.IDEMPOTENCY_TTL_SECONDS,
  });
  const paymentProvider = new StripePaymentProvider({
    secretKey: env.STRIPE_SECRET_KEY,
    simulatorUrl: env.PAYMENT_SIMULATOR_URL,
  });
  return {
    db: database,
    /** The same connections as `db`, for the hot path's plain SQL (lib/db/client.ts). */
    pool,
    /** The pool's one-statement writes, prepared where the connection allows it (lib/db/statements.ts). */
    statements,
    idempotencyStore,
    paymentProvider,
    /** Checkouts per account, before the key is claimed: a refused request stores nothing under its key. */
    checkoutLimit: postgresRateLimit(statements, {
      name: "checkouts",
      points: env.CHECKOUT_RATE_LIMIT,
      windowSeconds: env.RATE_LIMIT_WINDOW_SECONDS,
    }),
    /** New API accounts per client address. */
    accountLimit: postgresRateLimit(statements, {
      name: "accounts",
      points: env.ACCOUNT_RATE_LIMIT,
      windowSeconds: env.RATE_LIMIT_WINDOW_SECONDS,
    }),
    /** Which endpoint owns a stored request, for the recovery worker to resume it. */
    endpointFor(method: string, path: string) {
      if (method === "POST" && path === "/api/orders") {
        return checkoutEndpoint({
          store: idempotencyStore,
          provider: paymentProvider,
        }) as IdempotentEndpoint<unknown, GatedRows>;
      }
      return undefined;
    },
  };
}

export function getServices() {
  services ??= buildServices();
  return services;
}
