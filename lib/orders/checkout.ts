import { setTimeout as delay } from "node:timers/promises";
import { assertNever } from "@/lib/assert-never";
import { injectFault, type FaultName } from "@/lib/faults";
import { IDEMPOTENCY_KEY_HEADER } from "@/lib/http/headers";
import { problemType, PROBLEM_CONTENT_TYPE } from "@/lib/http/problem-type";
import { addToContext } from "@/lib/observability/request-context";
import type { EndpointContext, IdempotentEndpoint } from "@/lib/idempotency/idempotent-endpoint";
import type { Outcome } from "@/lib/idempotency/outcomes";
import { PaymentOutcomeUnknown, PaymentRejected } from "@/lib/idempotency/payment-errors";
import { ChargeAlreadyRecordedError, type IdempotencyStore } from "@/lib/idempotency/store";
import type { StoredResponse } from "@oncepay/idempotency";
import type { LimitDecision, RateLimit } from "@/lib/limits/rate-limit";
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
 * From payment_started on, the cart is the one priced when the payment
 * started (stored with the key), not this attempt's: a resume must send the
 * provider the very same parameters (Stripe answers a key reused with other
 * ones with an idempotency_error) and record the amounts that were actually
 * charged, even if prices changed in between.
 */
export interface CheckoutDeps {
  store: IdempotencyStore;
  provider: PaymentProvider;
  /** Checkouts per account, counted once per new key (a takeover resumes one already counted). */
  limit?: RateLimit;
  /** The slow-network demo: how long to hold a new key's checkout before charging. */
  holdBeforeChargeMs?: () => Promise<number>;
  /** A failure this request asked for (tests and demos only). */
  fault?: FaultName;
}

/** The checkout endpoint, for the API route and the recovery worker alike. */
export function checkoutEndpoint(deps: CheckoutDeps): IdempotentEndpoint<PricedCart> {
  const { limit } = deps;
  return {
    store: deps.store,
    parseBody: parseCheckoutRequest,
    admit: limit && (async (accountId) => rateLimited(await limit.consume(accountId))),
    async perform(context) {
      const { claim } = context;
      addToContext({ providerKey: providerKeyOf(context) });
      switch (claim.recoveryPoint) {
        case "claimed": {
          // First time, or an earlier attempt died before it charged anything.
          const cart = context.body;
          await beforePaymentStarts(deps);
          await context.markPaymentStarted(cart);
          return recordOutcome(deps, context, cart, await charge(deps, context, cart));
        }
        case "payment_started": {
          // Charge again: the same provider key makes the provider return the first charge, if there was one.
          const cart = cartBeingCharged(claim.paymentRequest, context.body);
          return recordOutcome(deps, context, cart, await charge(deps, context, cart));
        }
        case "charged": {
          // The provider's answer is stored with the key: write the order from it, without asking again.
          const cart = cartBeingCharged(claim.paymentRequest, context.body);
          return recordOutcome(deps, context, cart, storedCharge(claim.chargeResult));
        }
        default:
          return assertNever(claim.recoveryPoint, "recovery point");
      }
    },
  };
}

type CheckoutContext = EndpointContext<PricedCart>;

function rateLimited(decision: LimitDecision): Outcome | undefined {
  if (decision.allowed) return undefined;
  const { retryAfterSeconds } = decision;
  return {
    kind: "rate-limited",
    retryAfterSeconds,
    detail: `This account sent more checkouts than its rate limit allows. Nothing was stored under the ${IDEMPOTENCY_KEY_HEADER}: retry with the same one after ${retryAfterSeconds} s.`,
  };
}

/** The demos' moment between the claim and the payment: a fault, or the slow network's hold. */
async function beforePaymentStarts(deps: CheckoutDeps): Promise<void> {
  injectFault(deps.fault, "after-claim");
  const holdMs = (await deps.holdBeforeChargeMs?.()) ?? 0;
  if (holdMs > 0) await delay(holdMs);
}

/** The order (or the decline) and the completed key, in one commit. */
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
    providerKey: providerKeyOf(context),
    cart,
    charge,
    provider: deps.provider.name,
  });
  // The last moment nothing of the order is written: the commit that writes it completes the key.
  injectFault(deps.fault, "before-commit");
  try {
    await context.complete(write);
    return write.response;
  } catch (error) {
    if (!(error instanceof ChargeAlreadyRecordedError)) throw error;
    // The provider answered with a payment an earlier key row recorded: the
    // key was reused, after its TTL, for the same cart while the provider
    // still remembers it. Recording it again would be an order nobody paid
    // for; charging under another provider key could be a second charge for
    // a row that was lost. The key keeps this answer instead.
    const refusal = expiredKeyReusedResponse(charge.providerPaymentId);
    await context.complete({ response: refusal });
    return refusal;
  }
}

function expiredKeyReusedResponse(providerPaymentId: string): StoredResponse {
  return {
    status: 422,
    headers: { "Content-Type": PROBLEM_CONTENT_TYPE },
    body: {
      type: problemType("idempotency-key-expired"),
      title: "Idempotency key reused after it expired",
      status: 422,
      detail: `This ${IDEMPOTENCY_KEY_HEADER} was used for an earlier checkout of the same cart, whose payment (${providerPaymentId}) the payment provider still remembers and our records already hold. Nothing was charged now. Send a new checkout with a new key.`,
    },
  };
}

/** Asks the provider, and keeps its answer with the key (`charged`). */
async function charge(
  deps: CheckoutDeps,
  context: CheckoutContext,
  cart: PricedCart,
): Promise<ChargeResult> {
  const result = await askProvider(deps, context, cart);
  injectFault(deps.fault, "after-charge");
  await context.recordCharge(result);
  return result;
}

/** How many of the request's provider keys one attempt asks under before it hands the key back. */
const PROVIDER_KEYS_PER_ATTEMPT = 3;

/**
 * Asks under the request's current provider key. When the provider proves
 * that key never charged and never will (it replays a failure it stored),
 * the payment moves on to the request's next provider key, durably, and asks
 * again.
 */
async function askProvider(
  deps: CheckoutDeps,
  context: CheckoutContext,
  cart: PricedCart,
): Promise<ChargeResult> {
  for (let asked = 1; ; asked++) {
    try {
      return await deps.provider.charge({
        amount: cart.total,
        currency: cart.currency,
        paymentMethod: cart.paymentMethod,
        idempotencyKey: providerKeyOf(context),
        firstAskedAt: context.claim.paymentStartedAt,
      });
    } catch (error) {
      const neverCharges = error instanceof PaymentProviderError && error.outcome === "absent";
      if (!neverCharges || asked === PROVIDER_KEYS_PER_ATTEMPT) throw asPaymentFailure(error);
      await context.startNextProviderKey();
      addToContext({ providerKey: providerKeyOf(context) });
    }
  }
}

/** The provider key the request charges under now: its own, at the claim's generation. */
function providerKeyOf(context: CheckoutContext): string {
  return paymentProviderKey(context, context.claim.providerKeyGeneration);
}

function cartBeingCharged(stored: unknown, fromThisAttempt: PricedCart): PricedCart {
  // Keys whose payment started before the cart was stored with them carry none.
  if (stored === null || stored === undefined) return fromThisAttempt;
  const parsed = pricedCartSchema.safeParse(stored);
  if (!parsed.success)
    throw new Error(`The cart stored with the key does not parse: ${parsed.error.message}`);
  return parsed.data;
}

function storedCharge(stored: unknown): ChargeResult {
  const parsed = chargeResultSchema.safeParse(stored);
  // Only this module writes it; a row that does not parse is a bug, not a retryable failure.
  if (!parsed.success) {
    throw new Error(
      `The charge result stored with the key does not parse: ${parsed.error.message}`,
    );
  }
  return parsed.data;
}

function asPaymentFailure(error: unknown): unknown {
  if (!(error instanceof PaymentProviderError)) return error;
  switch (error.outcome) {
    case "rejected":
      return new PaymentRejected(
        "The payment provider refused the request, so nothing was charged. This is a problem on our side; the same key can be retried once it is fixed.",
        { cause: error },
      );
    case "unknown":
      return new PaymentOutcomeUnknown(
        "The payment provider did not answer in time. Retry with the same Idempotency-Key: it resumes this payment and never charges twice.",
        { cause: error },
      );
    case "absent":
      return new PaymentOutcomeUnknown(
        "The payment provider failed and, as its records show, charged nothing. Retry with the same Idempotency-Key: the payment goes on and is charged once.",
        { cause: error },
      );
    default:
      return assertNever(error.outcome, "provider error outcome");
  }
}
