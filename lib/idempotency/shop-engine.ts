import {
  createEngine,
  recoverAbandonedKeys,
  type KeyedCall,
  type KeyStore,
  type Outcome,
  type RecoveryReport,
  type Reporter,
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
import type { PaymentProvider } from "@/lib/payments/provider";

/**
 * The shop's use of the engine package: one engine, over the store the app
 * was configured with, running one operation (the checkout), with its
 * log as the engine's reporter. Generic over the store's transaction inside,
 * plain outside, so the rest of the shop never names a store.
 */
export interface CheckoutEngine {
  /** Runs one checkout request under its key (the demos' fault and hold, if it asked for them). */
  run(call: KeyedCall, demos?: CheckoutDemos): Promise<Outcome | RateLimitedOutcome>;
  /** The recovery worker's run: finishes or releases keys whose attempt died. */
  recover(options: { batchSize: number; concurrency: number }): Promise<RecoveryReport>;
  /** The reaper's: deletes up to `limit` keys past their time to live that are safe to forget. */
  deleteExpired(limit: number): Promise<number>;
  isUnavailable(error: unknown): boolean;
}

export interface CheckoutDemos {
  /** A failure this request asked for (tests and demos only). */
  fault?: FaultName;
  /** The slow-network demo: how long to hold a new key's checkout before charging. */
  holdBeforeChargeMs?: () => Promise<number>;
}

export interface CheckoutParts<Tx> {
  store: KeyStore<Tx>;
  orderRows: OrderRowsWriter<Tx>;
  provider: PaymentProvider;
  /** Checkouts per account, counted once per new key (a takeover resumes one already counted). */
  limit?: RateLimit;
}

export function checkoutEngine<Tx>(parts: CheckoutParts<Tx>): CheckoutEngine {
  const { store, orderRows, provider, limit } = parts;
  const checkout = checkoutOperation({ provider, orderRows });
  const engine = createEngine({ store, operations: [checkout], reporter: logReporter });
  return {
    run(call, { fault, holdBeforeChargeMs } = {}) {
      // A request that asks for a fault runs its own copy of the operation, under the same name.
      const operation = fault ? checkoutOperation({ provider, orderRows, fault }) : checkout;
      return engine.run(operation, call, {
        admit: admitCheckout({ accountId: call.scope, limit, holdBeforeChargeMs }),
        // From here on, every line names the key's row and the provider key
        // to find its charge by, even the lines of an attempt that fails before it charges.
        onClaimed: (claim, request) =>
          addToContext({
            keyId: claim.keyId,
            providerKey: providerKeyOf(request, claim.sideEffectGeneration),
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
const logReporter: Reporter = {
  info: (event, fields) => log.info(event, logFields(fields)),
  warn: (event, fields) => log.warn(event, logFields(fields)),
  error: (event, fields) => log.error(event, logFields(fields)),
};

function logFields({ error, ...fields }: Record<string, unknown>): Record<string, unknown> {
  return error === undefined ? fields : { ...fields, ...errorFields(error) };
}
