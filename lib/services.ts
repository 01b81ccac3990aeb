import type { Authenticator } from "@/lib/auth/accounts";
import { db, sqlPool } from "@/lib/db/client";
import { statementModeOf, statementsOn } from "@/lib/db/statements";
import { serverEnv } from "@/lib/env";
import { clientAddress } from "@/lib/http/client-address";
import { pgStore } from "@oncepay/idempotency/pg";
import { prismaStore } from "@oncepay/idempotency/prisma";
import { keyRequestRecorder } from "@/lib/idempotency/key-request-recorder";
import { processKeyWaiters } from "@/lib/idempotency/key-waiters";
import { shopEngine } from "@/lib/idempotency/shop-engine";
import { providerReadsOf } from "@/lib/ledger/provider-reads";
import { postgresRateLimit } from "@/lib/limits/rate-limit";
import { prismaOrderRows, sqlOrderRows } from "@/lib/orders/order-rows";
import { StripePaymentProvider } from "@/lib/payments/stripe-provider";
import { pgStatements, prismaStatements } from "@/lib/refunds/refund-rows";

/**
 * The composition root: the one place that picks concrete implementations.
 * Built on first use, so importing route modules (as `next build` does) opens
 * no connection. Only the modules that answer requests (lib/api, lib/pages)
 * and the background work ask for it; they hand each module below them what
 * it needs.
 */
let services: ReturnType<typeof buildServices> | undefined;

function buildServices() {
  const env = serverEnv();
  const database = db();
  const pool = sqlPool();
  const statementMode = statementModeOf(env);
  const statements = statementsOn(pool, statementMode);
  const keyTimings = {
    leaseSeconds: env.IDEMPOTENCY_LEASE_SECONDS,
    ttlSeconds: env.IDEMPOTENCY_TTL_SECONDS,
  };
  const paymentProvider = new StripePaymentProvider({
    secretKey: env.STRIPE_SECRET_KEY,
    simulatorUrl: env.PAYMENT_SIMULATOR_URL,
  });
  const checkoutLimit = postgresRateLimit(statements, {
    name: "checkouts",
    points: env.CHECKOUT_RATE_LIMIT,
    windowSeconds: env.RATE_LIMIT_WINDOW_SECONDS,
  });
  // The checkout page reads the outcome of a payment its shopper authenticated (lib/client).
  const returnUrl = env.PUBLIC_URL && new URL("/?checkout=returned", env.PUBLIC_URL).toString();
  /** Requests waiting for their key's first attempt (Prefer: wait), woken by its commit. */
  const keyWaiters = processKeyWaiters();
  const waiting = {
    waiters: keyWaiters,
    maxWaitMs: env.KEY_WAIT_MAX_SECONDS * 1000,
    maxWaiters: env.KEY_WAIT_MAX_WAITERS,
  };
  /** The engine package running the checkout and refunds, on the store the app is configured with. */
  const engine =
    env.IDEMPOTENCY_STORE === "prisma"
      ? shopEngine({
          store: prismaStore(database, keyTimings),
          orderRows: prismaOrderRows,
          statements: prismaStatements,
          provider: paymentProvider,
          returnUrl,
          limit: checkoutLimit,
          waiting,
        })
      : shopEngine({
          store: pgStore(pool, { ...keyTimings, statements: statementMode }),
          orderRows: sqlOrderRows,
          statements: pgStatements,
          provider: paymentProvider,
          returnUrl,
          limit: checkoutLimit,
          waiting,
        });
  /** New accounts per client address. */
  const accountLimit = postgresRateLimit(statements, {
    name: "accounts",
    points: env.ACCOUNT_RATE_LIMIT,
    windowSeconds: env.RATE_LIMIT_WINDOW_SECONDS,
  });
  /** Requests to the strategy lab, per account. */
  const labLimit = postgresRateLimit(statements, {
    name: "lab",
    points: env.LAB_RATE_LIMIT,
    windowSeconds: env.RATE_LIMIT_WINDOW_SECONDS,
  });
  /** Lookups at the payment provider, per account (lib/ledger/provider-reads.ts). */
  const providerReadLimit = postgresRateLimit(statements, {
    name: "provider_reads",
    points: env.PROVIDER_READ_RATE_LIMIT,
    windowSeconds: env.RATE_LIMIT_WINDOW_SECONDS,
  });
  const authenticator: Authenticator = {
    db: database,
    pool,
    admitNewAccount: (request, transaction) =>
      (transaction ? accountLimit.within(transaction) : accountLimit).consume(
        clientAddress(request.headers, env.TRUSTED_PROXIES),
      ),
  };
  return {
    db: database,
    /** The same connections as `db`, for the hot path's plain SQL (lib/db/client.ts). */
    pool,
    /** The pool's one-statement writes, prepared where the connection allows it (lib/db/statements.ts). */
    statements,
    paymentProvider,
    engine,
    keyWaiters,
    /** The requests presented under keys, written behind their answers (lib/idempotency/key-request-recorder.ts). */
    keyRequests: keyRequestRecorder(statements),
    /** Who is asking, and the per-address limit on new accounts (API and browser alike). */
    authenticator,
    labLimit,
    /** What one account's reads may ask the payment provider. */
    providerReadsFor: (accountId: string) =>
      providerReadsOf(paymentProvider, providerReadLimit, accountId),
  };
}

export function getServices() {
  services ??= buildServices();
  return services;
}
