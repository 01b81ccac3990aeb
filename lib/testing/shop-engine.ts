import type pg from "pg";
import { pgStore } from "@oncepay/idempotency/pg";
import { checkoutEngine, type CheckoutEngine } from "@/lib/idempotency/checkout-engine";
import { sqlOrderRows } from "@/lib/orders/order-rows";
import type { PaymentProvider } from "@/lib/payments/provider";

/** The key timings the tests' own engines use: a lease no test outlives, a day's TTL. */
export const TEST_KEY_TIMINGS = { leaseSeconds: 30, ttlSeconds: 24 * 60 * 60 };

/**
 * The shop's checkout engine on a pool of the database under test, as the
 * app builds it (the SQL store), with the provider a test gives it: another
 * instance of the app, in effect, for the recovery worker's tests.
 * Statements go unnamed, as the embedded database needs.
 */
export function checkoutEngineOn(pool: pg.Pool, provider: PaymentProvider): CheckoutEngine {
  return checkoutEngine({
    store: pgStore(pool, { ...TEST_KEY_TIMINGS, statements: "unnamed" }),
    orderRows: sqlOrderRows,
    provider,
  });
}
