import { setTimeout as delay } from "node:timers/promises";
import { assertNever } from "@/lib/assert-never";
import type { GatedQuery, GatedRows } from "@/lib/db/sql";
import { injectFault, type FaultName } from "@/lib/faults";
import { addToContext } from "@/lib/observability/request-context";
import type { EndpointContext, IdempotentEndpoint } from "@/lib/idempotency/idempotent-endpoint";
import {
  SideEffectOutcomeUnknown,
  SideEffectProvedAbsent,
  SideEffectRejected,
} from "@/lib/idempotency/side-effect-errors";
import type { IdempotencyStore } from "@/lib/idempotency/store";
import type { StoredResponse } from "@/lib/idempotency/stored-response";
import { parseCheckoutRequest, pricedCartSchema, type PricedCart } from "@/lib/orders/cart";
import { paymentProviderKey } from "@/lib/orders/provider-key";
import { chargeWrite } from "@/lib/orders/record";
import {
  chargeResultSchema,
  PaymentProviderError,
  type ChargeResult,
  type PaymentProvider,
} from "@/lib/payments/provider";

/**
 * POST /api/orders: price the cart, charge it, and record the outcome. The
 * idempotency layer around it guarantees this runs to completion at most once
 * per (account, key); this module only says what one checkout does, and
 * where it resumes when an earlier attempt died part-way: one case per
 * recovery point in `perform`, checked by the compiler for completeness.
 *
 * From payment_started on, the cart is the one priced when the charge began
 * (stored with the key), not this attempt's: a resume must send the provider
 * the very same parameters (Stripe answers a key reused with other ones with
 * an idempotency_error) and record the amounts that were actually charged,
 * even if prices changed in between.
 */
interface CheckoutDeps {
  store: IdempotencyStore<GatedRows, GatedQuery<unknown>>;
  provider: PaymentProvider;
  /** A failure this request asked for (tests and demos only). */
  fault?: FaultName;
  /** The slow-network demo: how long to hold the claimed key before charging (asked only on a first-time checkout). */
  holdBeforeChargeMs?: () => number;
}

export function checkoutEndpoint(
  deps: CheckoutDeps,
): IdempotentEndpoint<PricedCart, GatedRows, GatedQuery<unknown>> {
  return {
    store: deps.store,
    parseBody: parseCheckoutRequest,
    async perform(context) {
      const { claim } = context;
      addToContext({ providerKey: paymentProviderKey(context.accountId, claim.keyId) });
      switch (claim.recoveryPoint) {
        case "claimed": {
          // First time, or an earlier attempt died before it charged anything.
          const cart = context.body;
          return recordOutcome(deps, context, cart, await chargeFirstTime(deps, context, cart));
        }
        case "payment_started": {
          // Charge again: the same provider key makes the provider return the first charge, if there was one.
          const cart = cartBeingCharged(claim.sideEffectRequest, context.body);
          return recordOutcome(deps, context, cart, await chargeCart(deps, context, cart));
        }
        case "charged": {
          // The provider's answer is stored with the key: write the order from it, without asking again.
          const cart = cartBeingCharged(claim.sideEffectRequest, context.body);
          return recordOutcome(deps, context, cart, storedCharge(claim.sideEffectResult));
        }
        default:
          return assertNever(claim.recoveryPoint, "recovery point");
      }
    },
  };
}

type CheckoutContext = EndpointContext<PricedCart, GatedRows>;

/** The order (or the decline) and the completed key, in one statement. */
async function recordOutcome(
  deps: CheckoutDeps,
  context: CheckoutContext,
  cart: PricedCart,
  charge: ChargeResult,
): Promise<StoredResponse> {
  const { accountId, idempotencyKey, claim } = context;
  const write = chargeWrite({
    accountId,
    keyId: claim.keyId,
    idempotencyKey,
    source: "checkout",
    providerKey: paymentProviderKey(accountId, claim.keyId),
    cart,
    charge,
    provider: deps.provider.name,
  });
  // The last moment nothing of the order is written: the statement that
  // writes it commits it.
  injectFault(deps.fault, "before-commit");
  await context.complete(write);
  return write.response;
}

/** Records that the payment begins, with the cart it charges, then charges it. */
async function chargeFirstTime(
  deps: CheckoutDeps,
  context: CheckoutContext,
  cart: PricedCart,
): Promise<ChargeResult> {
  injectFault(deps.fault, "after-claim");
  const holdMs = deps.holdBeforeChargeMs?.() ?? 0;
  if (holdMs > 0) await delay(holdMs);
  await context.beginSideEffect(cart);
  return chargeCart(deps, context, cart);
}

/** Asks the provider under the key row's provider key, and keeps its answer with the key (`charged`). */
async function chargeCart(
  deps: CheckoutDeps,
  context: CheckoutContext,
  cart: PricedCart,
): Promise<ChargeResult> {
  const { accountId, claim } = context;
  let charge: ChargeResult;
  try {
    charge = await deps.provider.charge({
      amount: cart.total,
      currency: cart.currency,
      paymentMethod: cart.paymentMethod,
      idempotencyKey: paymentProviderKey(accountId, claim.keyId),
      firstAskedAt: claim.sideEffectStartedAt,
    });
  } catch (error) {
    throw asSideEffectFailure(error);
  }
  injectFault(deps.fault, "after-charge");
  await context.recordSideEffectResult(charge);
  return charge;
}

function cartBeingCharged(stored: unknown, fromThisAttempt: PricedCart): PricedCart {
  // Keys whose payment began before the cart was stored with them carry none.
  if (stored === null || stored === undefined) return fromThisAttempt;
  const parsed = pricedCartSchema.safeParse(stored);
  if (!parsed.success)
    throw new Error(`The cart stored with the key does not parse: ${parsed.error.message}`);
  return parsed.data;
}

function storedCharge(stored: unknown): ChargeResult {
  const parsed = chargeResultSchema.safeParse(stored);
  // Only this module writes it; a row that does not parse is a bug, not a retryable failure.
  if (!parsed.success)
    throw new Error(
      `The charge result stored with the key does not parse: ${parsed.error.message}`,
    );
  return parsed.data;
}

function asSideEffectFailure(error: unknown): unknown {
  if (!(error instanceof PaymentProviderError)) return error;
  switch (error.outcome) {
    case "rejected":
      return new SideEffectRejected(
        "The payment provider refused the request, so nothing was charged. This is a problem on our side; the same key can be retried once it is fixed.",
        { cause: error },
      );
    case "unknown":
      return new SideEffectOutcomeUnknown(
        "The payment provider did not answer in time. Retry with the same Idempotency-Key: it resumes this payment and never charges twice.",
        { cause: error },
      );
    case "absent":
      return new SideEffectProvedAbsent(
        "The payment provider failed and, as its records show, charged nothing. Retry with the same Idempotency-Key: the payment starts afresh and is charged once.",
        { cause: error },
      );
    default:
      return assertNever(error.outcome, "provider error outcome");
  }
}
