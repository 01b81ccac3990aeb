import {
  createEngine,
  recoverAbandonedKeys,
  type KeyedCall,
  type KeyStore,
  type Outcome,
  type RecoveryReport,
  type Reporter,
  type WaitingOptions,
} from "@oncepay/idempotency";
import type { FaultName } from "@/lib/faults";
import type { RateLimit } from "@/lib/limits/rate-limit";
import { errorFields, log } from "@/lib/log";
import { addToContext, runWithContext } from "@/lib/observability/request-context";
import {
  admitCheckout,
  checkoutOperation,
  providerKeyOf,
  type RateLimitedOutcome,
} from "@/lib/orders/checkout";
import type { OrderRowsWriter } from "@/lib/orders/order-rows";
import type { PaymentProvider, RefundProvider } from "@/lib/payments/provider";
import { refundProviderKey } from "@/lib/refunds/provider-key";
import { refundOperation } from "@/lib/refunds/refund";
import type { RunStatement } from "@/lib/refunds/refund-rows";

/**
 * The shop's use of the engine package: one engine, over the store the app
 * was configured with, running the shop's two operations (the checkout and
 * the refund), with its log as the engine's reporter. Generic over the
 * store's transaction inside, plain outside, so the rest of the shop never
 * names a store.
 */
export interface ShopEngine {
  /** Runs one checkout request under its key (the demos' fault and hold, if it asked for them). */
  checkout(call: KeyedCall, options?: CheckoutOptions): Promise<Outcome | RateLimitedOutcome>;
  /** Runs one refund request under its key: `call.body` is the order's id and the amount. */
  refund(call: KeyedCall, options?: { fault?: FaultName; waitMs?: number }): Promise<Outcome>;
  /** The recovery worker's run: finishes or releases keys whose attempt died. */
  recover(options: { batchSize: number; concurrency: number }): Promise<RecoveryReport>;
  /** The reaper's: deletes up to `limit` keys past their time to live that are safe to forget. */
  deleteExpired(limit: number): Promise<number>;
  isUnavailable(error: unknown): boolean;
}

export interface CheckoutOptions {
  /** A failure this request asked for (tests and demos only). */
  fault?: FaultName;
  /** The slow-network demo: how long to hold a new key's checkout before charging. */
  holdBeforeChargeMs?: () => Promise<number>;
  /** How long the client will wait for another attempt that holds the key (Prefer: wait). */
  waitMs?: number;
}

export interface ShopEngineParts<Tx> {
  store: KeyStore<Tx>;
  orderRows: OrderRowsWriter<Tx>;
  /** How the refund runs its statements in the store's transaction. */
  statements: (tx: Tx) => RunStatement;
  provider: PaymentProvider & RefundProvider;
  /** Where a payment that asks for 3-D Secure sends the shopper back (PUBLIC_URL); unset, such a card cannot pay. */
  returnUrl?: string;
  /** Checkouts per account, counted once per new key (a takeover resumes one already counted). */
  limit?: RateLimit;
  /** Who waits for a key's first attempt, and how long at most. */
  waiting?: WaitingOptions;
}

export function shopEngine<Tx>(parts: ShopEngineParts<Tx>): ShopEngine {
  const { store, orderRows, statements, provider, limit, waiting, returnUrl } = parts;
  const checkout = checkoutOperation({ provider, orderRows, returnUrl });
  const refund = refundOperation({ provider, statements });
  const engine = createEngine({
    store,
    operations: [checkout, refund],
    reporter: logReporter,
    ...(waiting && { waiting }),
  });
  return {
    checkout(call, { fault, holdBeforeChargeMs, waitMs } = {}) {
      // A request that asks for a fault runs its own copy of the operation, under the same name.
      const operation = fault
        ? checkoutOperation({ provider, orderRows, returnUrl, fault })
        : checkout;
      return engine.run(operation, call, {
        waitMs,
        admit: admitCheckout({ accountId: call.scope, limit, holdBeforeChargeMs, fault }),
        // From here on, every line names the key's row and the provider key
        // to find its charge by, even the lines of an attempt that fails before it charges.
        onClaimed: (claim, request) =>
          addToContext({
            keyId: claim.keyId,
            providerKey: providerKeyOf(request, claim.sideEffectGeneration),
          }),
      });
    },
    refund(call, { fault, waitMs } = {}) {
      const operation = fault ? refundOperation({ provider, statements, fault }) : refund;
      return engine.run(operation, call, {
        waitMs,
        onClaimed: (claim, request) =>
          addToContext({
            keyId: claim.keyId,
            providerKey: refundProviderKey(request, claim.sideEffectGeneration),
          }),
      });
    },
    recover: (options) =>
      recoverAbandonedKeys(engine, {
        ...options,
        // The key's lines carry its ids, as its attempts' lines do, so one
        // search finds the request's whole story, whichever instance finished it.
        aroundKey: (key, work) =>
          runWithContext({ keyId: key.keyId, accountId: key.scope, idempotencyKey: key.key }, work),
      }),
    deleteExpired: (limit) => store.deleteExpired(limit),
    isUnavailable: (error) => store.isUnavailable(error),
  };
}

/** The engine's events as the app's log lines, an error's message, name, stack and causes spelt out. */
export const logReporter: Reporter = {
  info: (event, fields) => log.info(event, logFields(fields)),
  warn: (event, fields) => log.warn(event, logFields(fields)),
  error: (event, fields) => log.error(event, logFields(fields)),
};

function logFields({ error, ...fields }: Record<string, unknown>): Record<string, unknown> {
  return error === undefined ? fields : { ...fields, ...errorFields(error) };
}
