import { setTimeout as delay } from "node:timers/promises";
import { z } from "zod";
import {
  defineOperation,
  SideEffectOutcomeUnknown,
  SideEffectRejected,
  type KeyedRequest,
  type Operation,
  type PhaseContext,
  type SideEffectContext,
  type Step,
  type StoredResponse,
} from "@oncepay/idempotency";
import { assertNever } from "@/lib/assert-never";
import { injectFault, type FaultName } from "@/lib/faults";
import { IDEMPOTENCY_KEY_HEADER } from "@/lib/http/headers";
import { problemType, storedProblem } from "@/lib/http/problem";
import { addToContext } from "@/lib/observability/request-context";
import type { LimitDecision, RateLimit } from "@/lib/limits/rate-limit";
import { parseCheckoutRequest, pricedCartSchema, type PricedCart } from "@/lib/orders/cart";
import type { OrderRowsWriter } from "@/lib/orders/order-rows";
import { paymentProviderKey } from "@/lib/orders/provider-key";
import { chargeWrite } from "@/lib/orders/record";
import {
  chargeResultSchema,
  PaymentProviderError,
  type ChargeResult,
  type PaymentProvider,
} from "@/lib/payments/provider";

/**
 * POST /api/orders as an operation of the engine package: price the cart,
 * charge it, record the outcome. The engine runs it at most once per
 * (account, key) and resumes it at the phase where an earlier attempt died:
 *
 *   (the claim)      records the cart to charge with the key, at
 *                    payment_started, durably, before the provider hears
 *                    of it (progressAtClaim)
 *   payment_started  side effect: asks the provider under the request's
 *                    provider key; its answer (charged) is kept with the
 *                    key in the next phase's commit
 *   charged          atomic: writes the order (or the declined payment),
 *                    the provider's answer and the completed key with the
 *                    response, in one commit
 *
 * From payment_started on, the cart (and the 3-D Secure return URL) is the
 * one recorded then, not this attempt's: a resume must send the provider the very same parameters
 * (Stripe answers a key reused with other ones with an idempotency_error)
 * and record the amounts that were actually charged, even if prices changed.
 */
export const CHECKOUT = "checkout";

export interface CheckoutDeps<Tx> {
  provider: PaymentProvider;
  /** How the last phase writes the order in its store's transaction. */
  orderRows: OrderRowsWriter<Tx>;
  /**
   * Where the bank's 3-D Secure page sends the shopper back: the shop's
   * configured address. Recorded with the claim, and read from there by
   * every attempt (the provider compares the parameters sent under one key,
   * and instances may be configured apart).
   */
  returnUrl?: string;
  /** A failure this request asked for (tests and demos only). */
  fault?: FaultName;
}

export function checkoutOperation<Tx>(deps: CheckoutDeps<Tx>): Operation<PricedCart, Tx> {
  return defineOperation<PricedCart, Tx>({
    name: CHECKOUT,
    parse(json) {
      const parsed = parseCheckoutRequest(json);
      return parsed.ok ? { ok: true, input: parsed.body, stored: parsed.request } : parsed;
    },
    // The return URL too: a resume by another instance, configured its own
    // way, must still send what the provider saw first.
    progressAtClaim: (cart) => ({
      cart,
      ...(deps.returnUrl !== undefined && { returnUrl: deps.returnUrl }),
    }),
    phases: [
      {
        kind: "side-effect",
        point: "payment_started",
        sideEffectKey: providerKeyOf,
        // Nothing before it writes anything but the key's claim.
        rejectionReleasesKey: true,
        run: (context) => charge(deps, context),
      },
      { kind: "atomic", point: "charged", run: (context, tx) => recordOutcome(deps, context, tx) },
    ],
  });
}

/** What the phases keep with the key: the cart from its claim on, the provider's answer at charged. */
const progressSchema = z.object({
  cart: pricedCartSchema.optional(),
  returnUrl: z.string().optional(),
  charge: chargeResultSchema.optional(),
  providerKey: z.string().optional(),
});

function progressOf(context: PhaseContext<PricedCart>) {
  const parsed = progressSchema.safeParse(context.progress);
  // Only this module writes it; a row that does not parse is a bug, not a retryable failure.
  if (!parsed.success)
    throw new Error(`The checkout's progress does not parse: ${parsed.error.message}`);
  // Keys whose payment started before the cart was kept with them carry none.
  return { ...parsed.data, cart: parsed.data.cart ?? context.input };
}

/** The provider key of a request, at a generation: its own, made from the request, not its row. */
export function providerKeyOf(request: KeyedRequest, generation: number): string {
  return paymentProviderKey(
    { accountId: request.scope, idempotencyKey: request.key, fingerprint: request.fingerprint },
    generation,
  );
}

/**
 * What a request that claimed a new key does before its first phase: the
 * account's rate limit (a refusal releases the claim), then the slow-network
 * demo's hold between the claim and the payment. It runs outside any
 * transaction, so a hold of seconds keeps no connection. A failure here, the
 * last moment nothing has been charged, releases the claim too.
 */
export function admitCheckout(options: {
  accountId: string;
  limit?: RateLimit;
  holdBeforeChargeMs?: () => Promise<number>;
  fault?: FaultName;
}): () => Promise<RateLimitedOutcome | undefined> {
  return async () => {
    injectFault(options.fault, "after-claim");
    if (options.limit) {
      const refusal = rateLimited(await options.limit.consume(options.accountId));
      if (refusal) return refusal;
    }
    const holdMs = (await options.holdBeforeChargeMs?.()) ?? 0;
    if (holdMs > 0) await delay(holdMs);
    return undefined;
  };
}

export interface RateLimitedOutcome {
  kind: "rate-limited";
  detail: string;
  retryAfterSeconds: number;
}

function rateLimited(decision: LimitDecision): RateLimitedOutcome | undefined {
  if (decision.allowed) return undefined;
  const { retryAfterSeconds } = decision;
  return {
    kind: "rate-limited",
    retryAfterSeconds,
    detail: `This account sent more checkouts than its rate limit allows. Nothing was stored under the ${IDEMPOTENCY_KEY_HEADER}: retry with the same one after ${retryAfterSeconds} s.`,
  };
}

/** Asks the provider; its answer goes on to `charged`, which writes it with the order. */
async function charge<Tx>(
  deps: CheckoutDeps<Tx>,
  context: SideEffectContext<PricedCart>,
): Promise<Step> {
  const { cart, returnUrl } = progressOf(context);
  const result = await askProvider(deps, context, cart, returnUrl);
  injectFault(deps.fault, "after-charge");
  return { to: "charged", progress: { charge: result, providerKey: context.sideEffectKey } };
}

/** How many of the request's provider keys one attempt asks under before it hands the key back. */
const PROVIDER_KEYS_PER_ATTEMPT = 3;

/**
 * Asks under the request's current provider key (a resume asks again: the
 * same key makes the provider return the first charge, if there was one).
 * When the provider proves that key never charged and never will (it
 * replays a failure it stored), the payment moves on to the request's next
 * provider key, durably, and asks again.
 */
async function askProvider<Tx>(
  deps: CheckoutDeps<Tx>,
  context: SideEffectContext<PricedCart>,
  cart: PricedCart,
  returnUrl: string | undefined,
): Promise<ChargeResult> {
  for (let asked = 1; ; asked++) {
    addToContext({ providerKey: context.sideEffectKey });
    try {
      return await deps.provider.charge({
        amount: cart.total,
        currency: cart.currency,
        paymentMethod: cart.paymentMethod,
        idempotencyKey: context.sideEffectKey,
        firstAskedAt: context.askedSince,
        ...(returnUrl !== undefined && { returnUrl }),
      });
    } catch (error) {
      const neverCharges = error instanceof PaymentProviderError && error.outcome === "absent";
      if (!neverCharges || asked === PROVIDER_KEYS_PER_ATTEMPT) throw asPaymentFailure(error);
      await context.nextSideEffectKey();
    }
  }
}

/** The order (or the decline) and the completed key, in one commit. */
async function recordOutcome<Tx>(
  deps: CheckoutDeps<Tx>,
  context: PhaseContext<PricedCart>,
  tx: Tx,
): Promise<Step> {
  const { cart, charge, providerKey } = progressOf(context);
  if (!charge || !providerKey)
    throw new Error("The checkout reached charged without the provider's answer");
  addToContext({ providerKey });
  const { request } = context;
  const write = chargeWrite({
    accountId: request.scope,
    keyId: request.keyId,
    idempotencyKey: request.key,
    source: "checkout",
    providerKey,
    cart,
    charge,
    provider: deps.provider.name,
  });
  // The last moment nothing of the order is written: its commit completes the key.
  injectFault(deps.fault, "before-commit");
  if (await deps.orderRows.writeUnlessRecorded(tx, write.rows)) return { response: write.response };
  // The provider answered with a payment an earlier key row recorded: the
  // key was reused, after its TTL, for the same cart while the provider
  // still remembers it. Recording it again would be an order nobody paid
  // for; charging under another provider key could be a second charge for
  // a row that was lost. The key keeps this answer instead.
  return { response: expiredKeyReusedResponse(charge.providerPaymentId) };
}

function expiredKeyReusedResponse(providerPaymentId: string): StoredResponse {
  return storedProblem({
    type: problemType("idempotency-key-expired"),
    title: "Idempotency key reused after it expired",
    status: 422,
    detail: `This ${IDEMPOTENCY_KEY_HEADER} was used for an earlier checkout of the same cart, whose payment (${providerPaymentId}) the payment provider still remembers and our records already hold. Nothing was charged now. Send a new checkout with a new key.`,
  });
}

function asPaymentFailure(error: unknown): unknown {
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
      return new SideEffectOutcomeUnknown(
        "The payment provider failed and, as its records show, charged nothing. Retry with the same Idempotency-Key: the payment goes on and is charged once.",
        { cause: error },
      );
    default:
      return assertNever(error.outcome, "provider error outcome");
  }
}
