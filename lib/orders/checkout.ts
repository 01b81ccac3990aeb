import type { IdempotentEndpoint } from "@/lib/idempotency/idempotent-endpoint";
import type { Transaction } from "@/lib/idempotency/postgres-store";
import type { IdempotencyStore } from "@/lib/idempotency/store";
import { parseCheckoutRequest, type PricedCart } from "@/lib/orders/cart";
import { recordDecline, recordPaidOrder } from "@/lib/orders/record";
import type { PaymentProvider } from "@/lib/payments/provider";
import { setTimeout as delay } from "node:timers/promises";
import { injectFault, type FaultName } from "@/lib/faults";

/**
 * POST /api/orders: price the cart, charge it, and record the outcome. The
 * idempotency layer around it guarantees this runs to completion at most once
 * per (account, key); this module only says what one checkout does.
 */
export function checkoutEndpoint(deps: {
  store: IdempotencyStore<Transaction>;
  provider: PaymentProvider;
  /** A failure this request asked for (tests and demos only). */
  fault?: FaultName;
  /** The slow-network demo: hold the claimed key this long before charging. */
  holdBeforeChargeMs?: number;
}): IdempotentEndpoint<PricedCart, Transaction> {
  return {
    store: deps.store,
    parseBody: parseCheckoutRequest,
    async perform({ accountId, idempotencyKey, body: cart, claim, beginSideEffect, complete }) {
      injectFault(deps.fault, "after-claim");
      if (deps.holdBeforeChargeMs) await delay(deps.holdBeforeChargeMs);
      await beginSideEffect();
      const charge = await deps.provider.charge({
        amount: cart.total,
        currency: cart.currency,
        paymentMethod: cart.paymentMethod,
        // Scoped by account: two shoppers may pick the same key, but they
        // must never share a charge at the provider.
        idempotencyKey: `${accountId}:${idempotencyKey}`,
      });
      injectFault(deps.fault, "after-charge");
      const record = { accountId, keyId: claim.keyId, cart, charge, provider: deps.provider.name };
      return complete(async (tx) => {
        const response = charge.status === "succeeded" ? await recordPaidOrder(tx, record) : await recordDecline(tx, record);
        injectFault(deps.fault, "before-commit");
        return response;
      });
    },
  };
}
