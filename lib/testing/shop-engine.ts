import type pg from "pg";
import { pgStore } from "@oncepay/idempotency/pg";
import { shopEngine, type ShopEngine } from "@/lib/idempotency/shop-engine";
import { sqlOrderRows } from "@/lib/orders/order-rows";
import type { PaymentProvider, RefundProvider } from "@/lib/payments/provider";
import { pgStatements } from "@/lib/refunds/refund-rows";

/** The key timings the tests' own engines use: a lease no test outlives, a day's TTL. */
export const TEST_KEY_TIMINGS = { leaseSeconds: 30, ttlSeconds: 24 * 60 * 60 };

/**
 * A provider for tests of the checkout alone: its refunds fail loudly, so a
 * test that reaches one by mistake says so.
 */
export function chargesOnly(provider: PaymentProvider): PaymentProvider & RefundProvider {
  return {
    name: provider.name,
    charge: (request) => provider.charge(request),
    refund: () => Promise.reject(new Error(`${provider.name} makes no refunds in this test`)),
  };
}

/**
 * The shop's engine on a pool of the database under test, as the app
 * builds it (the SQL store), with the provider a test gives it: another
 * instance of the app, in effect, for the recovery worker's tests.
 * Statements go unnamed, as the embedded database needs.
 */
export function shopEngineOn(
  pool: pg.Pool,
  provider: PaymentProvider & RefundProvider,
): ShopEngine {
  return shopEngine({
    store: pgStore(pool, { ...TEST_KEY_TIMINGS, statements: "unnamed" }),
    orderRows: sqlOrderRows,
    statements: pgStatements,
    provider,
  });
}
