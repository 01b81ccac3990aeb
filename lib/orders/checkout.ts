import { setTimeout as delay } from "node:timers/promises";
import { injectFault, type FaultName } from "@/lib/faults";
import type { EndpointContext, IdempotentEndpoint } from "@/lib/idempotency/idempotent-endpoint";
import type { Transaction } from "@/lib/idempotency/postgres-store";
import { SideEffectOutcomeUnknown, SideEffectRejected } from "@/lib/idempotency/side-effect-errors";
import type { IdempotencyStore } from "@/lib/idempotency/store";
import { parseCheckoutRequest, pricedCartSchema, type PricedCart } from "@/lib/orders/cart";
import { recordDecline, recordPaidOrder } from "@/lib/orders/record";
import { chargeResultSchema, PaymentProviderError, type ChargeResult, type PaymentProvider } from "@/lib/payments/provider";

/**
 * POST /api/orders: price the cart, charge it, and record the outcome. The
 * idempotency layer around it guarantees this runs to completion at most once
 * per (account, key); this module only says what one checkout does, and
 * where it resumes when an earlier attempt died part-way:
 *
 *   claimed          → charge (first time, or the earlier attempt charged nothing)
 *   payment_started  → charge again: the provider key makes it return the first charge
 *   charged          → the provider's answer is stored with the key: write the order from it
 *
 * From payment_started on, the cart is the one priced when the charge began
 * (stored with the key), not this attempt's: a resume must send the provider
 * the very same parameters (Stripe answers a key reused with other ones with
 * an idempotency_error) and record the amounts that were actually charged,
 * even if prices changed in between.
 */
interface CheckoutDeps {
  store: IdempotencyStore<Transaction>;
  provider: PaymentProvider;
  /** A failure this request asked for (tests and demos only). */
  fault?: FaultName;
  /** The slow-network demo: hold the claimed key this long before charging. */
  holdBeforeChargeMs?: number;
}

export function checkoutEndpoint(deps: CheckoutDeps): IdempotentEndpoint<PricedCart, Transaction> {
  return {
    store: deps.store,
    parseBody: parseCheckoutRequest,
    async perform(context) {
      const { accountId, claim, complete } = context;
      const cart = claim.recoveryPoint === "claimed" ? context.body : cartBeingCharged(claim.sideEffectRequest, context.body);
      const charge = claim.recoveryPoint === "charged" ? storedCharge(claim.sideEffectResult) : await chargeOnce(deps, context, cart);
      const record = { accountId, keyId: claim.keyId, cart, charge, provider: deps.provider.name };
      return complete(async (tx) => {
        const response = charge.status === "succeeded" ? await recordPaidOrder(tx, record) : await recordDecline(tx, record);
        injectFault(deps.fault, "before-commit");
        return response;
      });
    },
  };
}

async function chargeOnce(deps: CheckoutDeps, context: EndpointContext<PricedCart, Transaction>, cart: PricedCart): Promise<ChargeResult> {
  const { accountId, claim } = context;
  if (claim.recoveryPoint === "claimed") {
    injectFault(deps.fault, "after-claim");
    if (deps.holdBeforeChargeMs) await delay(deps.holdBeforeChargeMs);
    await context.beginSideEffect(cart);
  }
  let charge: ChargeResult;
  try {
    charge = await deps.provider.charge({
      amount: cart.total,
      currency: cart.currency,
      paymentMethod: cart.paymentMethod,
      idempotencyKey: paymentProviderKey(accountId, claim.keyId),
    });
  } catch (error) {
    throw asSideEffectFailure(error);
  }
  injectFault(deps.fault, "after-charge");
  await context.recordSideEffectResult(charge);
  return charge;
}

/**
 * The idempotency key the provider sees. It names the key row, not just the
 * client's Idempotency-Key: the row is the same for every attempt, takeover
 * and recovery of one request, so they all get the first charge back; but
 * once a key expires (TTL) the same Idempotency-Key is a new request with a
 * new row, and it must be a new charge rather than the provider's replay of
 * the old one. The account is part of it so that, at the provider, two
 * shoppers' charges can never meet.
 */
export function paymentProviderKey(accountId: string, keyId: string): string {
  return `${paymentProviderKeyPrefix(accountId)}${keyId}`;
}

/** What all of one account's provider keys start with, to find its charges at the provider. */
export function paymentProviderKeyPrefix(accountId: string): string {
  return `oncepay:${accountId}:`;
}

function cartBeingCharged(stored: unknown, fromThisAttempt: PricedCart): PricedCart {
  // Keys whose payment began before the cart was stored with them carry none.
  if (stored === null || stored === undefined) return fromThisAttempt;
  const parsed = pricedCartSchema.safeParse(stored);
  if (!parsed.success) throw new Error(`The cart stored with the key does not parse: ${parsed.error.message}`);
  return parsed.data;
}

function storedCharge(stored: unknown): ChargeResult {
  const parsed = chargeResultSchema.safeParse(stored);
  // Only this module writes it; a row that does not parse is a bug, not a retryable failure.
  if (!parsed.success) throw new Error(`The charge result stored with the key does not parse: ${parsed.error.message}`);
  return parsed.data;
}

function asSideEffectFailure(error: unknown): unknown {
  if (!(error instanceof PaymentProviderError)) return error;
  return error.outcome === "rejected"
    ? new SideEffectRejected("The payment provider refused the request, so nothing was charged. This is a problem on our side; the same key can be retried once it is fixed.", { cause: error })
    : new SideEffectOutcomeUnknown("The payment provider did not answer in time. Retry with the same Idempotency-Key: it resumes this payment and never charges twice.", { cause: error });
}
