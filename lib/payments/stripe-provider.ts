import Stripe from "stripe";
import {
  MAX_FOUND_PAYMENTS,
  PaymentLookupError,
  PaymentProviderError,
  type ChargeRequest,
  type ChargeResult,
  type PaymentProvider,
  type PaymentRecords,
  type ProviderCharge,
  type ProviderPayment,
  type ProviderRefund,
  type RefundProvider,
  type RefundRequest,
  type RefundResult,
} from "@/lib/payments/provider";
import {
  metadataQuery,
  providerCharge,
  providerPayment,
  providerRefund,
} from "@/lib/payments/stripe-records";

/**
 * OncePay's payment provider through the official `stripe` SDK: against the
 * local payment simulator (lib/payments/simulator) when `simulatorUrl` is
 * given, and otherwise against Stripe itself, where a `sk_test_…` key means
 * Stripe's test mode. The same code path serves both.
 *
 * Each charge is one PaymentIntent, created and confirmed in one call, under
 * OncePay's provider key (`oncepay:<account id>:<hash of the request>`) as Stripe's
 * Idempotency-Key. So however often a charge is repeated (a client retry
 * that takes the key over, the recovery worker, the SDK's own network
 * retries, which resend the same key) Stripe charges once and answers the
 * repeats with the first result.
 *
 * What a call can end in, and what OncePay should do:
 *
 *   succeeded                     → { status: "succeeded" }
 *   card declined (402 card_error) → { status: "declined" }, with Stripe's
 *                                   decline_code (generic_decline, insufficient_funds…)
 *   processing_error (402)        → { status: "declined", declineCode: "processing_error" }:
 *                                   the charge definitely failed and Stripe has saved that
 *                                   answer under the key, so asking again with the same key
 *                                   could only replay it. Trying again is a new checkout.
 *   network error, timeout, 5xx,
 *   409 key in use, 429,
 *   400 idempotency_error         → throws PaymentProviderError, outcome "unknown": the charge
 *                                   may or may not have happened. OncePay keeps its key in
 *                                   flight and a later attempt repeats the call with the same
 *                                   provider key, which returns the first charge or makes it.
 *                                   (An idempotency_error means the provider key already
 *                                   stands for a charge with other parameters: that charge
 *                                   may exist, so this is no proof that nothing was charged.)
 *   400 invalid request, 401/403  → throws PaymentProviderError, outcome "rejected": nothing was
 *                                   charged and repeating will not help; it is a bug or a
 *                                   misconfiguration to fix (bad key, unsupported parameter).
 *   500 api_error                 → reconciled (see `reconcile`): Stripe stores a 500 that
 *                                   happened while it executed the request and replays it
 *                                   under the key for 24 hours, so asking again cannot tell
 *                                   what happened. Each PaymentIntent carries its provider key
 *                                   in its metadata; a search for it finds the charge and its
 *                                   outcome, or proves there is none (outcome "absent").
 *
 * Each refund (RefundProvider) is one Refund of a PaymentIntent's charge,
 * created under OncePay's refund key as Stripe's Idempotency-Key, which it
 * also carries in its metadata (PROVIDER_KEY_METADATA). Stripe decides
 * whether it fits in what is left of the charge, so refunds of one payment
 * asked for at once can never give back more than it took. What a call can
 * end in, and what OncePay should do:
 *
 *   200, refund succeeded         → { status: "succeeded", providerRefundId, amount }
 *   200, refund pending or
 *   requires_action               → read back once (a replay under the key repeats the first
 *                                   answer; the refund itself moves on): its status now
 *                                   decides, and still pending throws "unknown" (see
 *                                   `refundOutcome` for why pending is not taken as done)
 *   200, refund failed or canceled → { status: "refused" }, code the failure_reason: nothing
 *                                   went back to the card
 *   400 amount_too_large,
 *   charge_already_refunded,
 *   charge_disputed,
 *   charge_not_refundable,
 *   refund_disputed_payment       → { status: "refused", code, message }: Stripe refused this
 *                                   refund itself and refunded nothing; it stored that answer
 *                                   under the key, so asking again could only replay it
 *   network error, timeout,
 *   409 key in use, 429,
 *   400 idempotency_error         → throws PaymentProviderError, outcome "unknown": the refund
 *                                   may or may not have happened; a later attempt under the
 *                                   same key returns it or makes it
 *   5xx                           → looked up: the PaymentIntent's refunds are listed (a list,
 *                                   not a search, so it does not lag) and the one carrying the
 *                                   key is the answer; none found throws "unknown" (a 500
 *                                   Stripe stored under the key is replayed to every retry, so
 *                                   only this lookup can ever tell)
 *   other 400, 401/403, 404       → throws PaymentProviderError, outcome "rejected": nothing was
 *                                   refunded and repeating will not help (a PaymentIntent that
 *                                   did not succeed or does not exist, a bad key)
 *
 * It also reads the provider's records back (PaymentRecords: findPayments by
 * metadata, chargesOf and refundsOf a PaymentIntent), for the ledger that
 * shows every order was charged once and refunded at most what it paid.
 * Stripe's search index lags behind new PaymentIntents
 * (under a minute normally), so there a charge made just now may be missing
 * from findPayments for a while; the simulator's search is immediately
 * consistent. Listing a PaymentIntent's charges or refunds does not go
 * through search and never lags.
 */

/** The metadata field each PaymentIntent carries its provider key in, to be found again by search. */
export const PROVIDER_KEY_METADATA = "oncepay_provider_key";

/**
 * How long Stripe's search may lag behind a new PaymentIntent: Stripe says
 * under a minute in normal operation and longer during an incident. Until a
 * charge was first asked for this long ago, a search that finds nothing is
 * no proof that there is nothing.
 */
const STRIPE_SEARCH_LAG_MS = 10 * 60 * 1000;

// Stripe's largest page, for search and for lists alike: the fewest round trips.
const PAGE_SIZE = 100;

export interface StripePaymentProviderOptions {
  /** A Stripe secret key. Test-mode only (`sk_test_…`/`rk_test_…`): OncePay is a demo shop. */
  secretKey: string;
  /** The payment simulator's base URL (`http://127.0.0.1:12111`); unset means api.stripe.com. */
  simulatorUrl?: string;
  /** The SDK's automatic retries, each with the same Idempotency-Key. Default 2. */
  maxNetworkRetries?: number;
  /**
   * Per HTTP attempt. Default 8 s: three attempts and the SDK's backoff
   * between them (0.5 s, then at most 1 s) come to under 26 s, inside
   * OncePay's default 30 s lease, which is renewed when the charge begins;
   * so the attempt that holds the key is normally the one that finishes it.
   */
  timeoutMs?: number;
  /** See STRIPE_SEARCH_LAG_MS; the simulator's search is immediately consistent (default 0 there). */
  searchLagMs?: number;
}

/**
 * Stripe's refusals of a refund itself: the request was well-formed, and
 * the charge cannot give back this amount (more than is left, nothing
 * left, disputed, not refundable). Each refunded nothing.
 */
const REFUND_REFUSAL_CODES: ReadonlySet<string> = new Set([
  "amount_too_large",
  "charge_already_refunded",
  "charge_disputed",
  "charge_not_refundable",
  "refund_disputed_payment",
]);

export class StripePaymentProvider implements PaymentProvider, RefundProvider, PaymentRecords {
  readonly name: string;
  private readonly stripe: Stripe;
  private readonly searchLagMs: number;

  constructor(options: StripePaymentProviderOptions) {
    if (!/^(sk|rk)_test_/.test(options.secretKey)) {
      throw new Error(
        "StripePaymentProvider needs a test-mode secret key (sk_test_…): OncePay is a demo and must never charge real cards.",
      );
    }
    const config = {
      maxNetworkRetries: options.maxNetworkRetries ?? 2,
      timeout: options.timeoutMs ?? 8_000,
      appInfo: { name: "OncePay" },
    };
    if (options.simulatorUrl) {
      const url = new URL(options.simulatorUrl);
      const protocol = url.protocol === "https:" ? "https" : "http";
      this.stripe = new Stripe(options.secretKey, {
        ...config,
        host: url.hostname,
        port: url.port || (protocol === "https" ? 443 : 80),
        protocol,
      });
      // Recorded with each payment, so simulated money is never mistaken for Stripe's.
      this.name = "stripe-simulator";
      this.searchLagMs = options.searchLagMs ?? 0;
    } else {
      this.stripe = new Stripe(options.secretKey, config);
      this.name = "stripe";
      this.searchLagMs = options.searchLagMs ?? STRIPE_SEARCH_LAG_MS;
    }
  }

  async charge(request: ChargeRequest): Promise<ChargeResult> {
    let intent: Stripe.PaymentIntent;
    try {
      intent = await this.stripe.paymentIntents.create(
        {
          amount: request.amount,
          currency: request.currency,
          payment_method: request.paymentMethod,
          confirm: true,
          // Cards only, and no redirect-based payment methods; a card's
          // 3-D Secure still sends the shopper to their bank and back.
          automatic_payment_methods: { enabled: true, allow_redirects: "never" },
          ...(request.returnUrl !== undefined && { return_url: request.returnUrl }),
          // Spread first, so the provider key (what reconcile searches for)
          // wins; without request.metadata this is the provider key alone, so
          // the parameters stay those every earlier attempt sent.
          metadata: { ...request.metadata, [PROVIDER_KEY_METADATA]: request.idempotencyKey },
        },
        { idempotencyKey: request.idempotencyKey },
      );
    } catch (error) {
      if (error instanceof Stripe.errors.StripeAPIError && (error.statusCode ?? 0) >= 500)
        return this.reconcile(request, error);
      return declineOrThrow(error);
    }
    const outcome = settledOrWaiting(intent);
    if (outcome) return outcome;
    // processing, requires_capture…: not a state a confirmed card payment
    // without manual capture ends in; a replay under the same key would only
    // repeat it, so someone has to look.
    throw new PaymentProviderError(
      `PaymentIntent ${intent.id} ended in status ${intent.status}`,
      "rejected",
    );
  }

  async paymentOutcome(providerPaymentId: string): Promise<ChargeResult> {
    let intent: Stripe.PaymentIntent;
    try {
      intent = await this.stripe.paymentIntents.retrieve(providerPaymentId);
    } catch (error) {
      throw new PaymentLookupError(
        `Reading ${providerPaymentId} at ${this.name} failed: ${messageOf(error)}`,
        { cause: error },
      );
    }
    const outcome = settledOrWaiting(intent);
    if (!outcome)
      throw new PaymentLookupError(`PaymentIntent ${intent.id} is in status ${intent.status}`);
    return outcome;
  }

  /**
   * After a 500, find out what happened by looking the PaymentIntent up by
   * its provider key. Found: its outcome is the charge's, whatever the 500
   * said. Not found: nothing can be concluded from one 500 (it may not have
   * been stored, and the next attempt may charge), nor from a search younger
   * than the search lag; but when Stripe replays a stored 500 under the key
   * (Idempotent-Replayed), no attempt can ever charge under that key again,
   * and a search old enough proves none did: "absent".
   */
  private async reconcile(
    request: ChargeRequest,
    failure: Stripe.errors.StripeAPIError,
  ): Promise<ChargeResult> {
    let found: Stripe.PaymentIntent[];
    try {
      const query = metadataQuery({ [PROVIDER_KEY_METADATA]: request.idempotencyKey });
      found = (await this.stripe.paymentIntents.search({ query, limit: 10 })).data;
    } catch (lookup) {
      throw new PaymentProviderError(
        `The charge's outcome is unknown: ${failure.message} (and looking it up failed too)`,
        "unknown",
        { cause: lookup },
      );
    }
    const intent = found.find((candidate) => candidate.status === "succeeded") ?? found[0];
    if (intent) return outcomeOfFoundIntent(intent);

    const replayed = failure.headers?.["idempotent-replayed"] === "true";
    const searchCaughtUp =
      request.firstAskedAt !== undefined &&
      Date.now() - request.firstAskedAt.getTime() >= this.searchLagMs;
    if (replayed && searchCaughtUp) {
      throw new PaymentProviderError(
        `The provider keeps answering a stored failure under ${request.idempotencyKey}, and no charge exists under it`,
        "absent",
        { cause: failure },
      );
    }
    throw new PaymentProviderError(
      `The charge's outcome is unknown: ${failure.message}`,
      "unknown",
      { cause: failure },
    );
  }

  async refund(request: RefundRequest): Promise<RefundResult> {
    // Refused here, not sent: Stripe would answer 400 too, and a caller that
    // asks for this has a bug, not a refund to wait for.
    if (!Number.isSafeInteger(request.amount) || request.amount <= 0) {
      throw new PaymentProviderError(
        `A refund's amount is a positive whole number of minor units, not ${request.amount}`,
        "rejected",
      );
    }
    let refund: Stripe.Refund;
    try {
      refund = await this.stripe.refunds.create(
        {
          payment_intent: request.providerPaymentId,
          amount: request.amount,
          // The key alone, always: every attempt sends the very same parameters.
          metadata: { [PROVIDER_KEY_METADATA]: request.idempotencyKey },
        },
        { idempotencyKey: request.idempotencyKey },
      );
    } catch (error) {
      if (error instanceof Stripe.errors.StripeAPIError && (error.statusCode ?? 0) >= 500)
        return this.findRefund(request, error);
      return refusalOrThrow(error);
    }
    return this.refundOutcome(refund, true);
  }

  /**
   * A refund object's outcome. Stripe's docs say a card refund is submitted
   * at once but may be `pending` (the balance cannot cover it yet, or it is
   * still processing), and that a refund can fail afterwards, the money
   * going back to the merchant's balance. So `pending` is not money that has
   * left for good, and it is not taken as succeeded; nor is it a refusal,
   * since it may still go through. It is read back once, as the create's
   * answer may be a replay from when it was first asked; if it is still
   * pending, "unknown": OncePay keeps its key and asks again later under the
   * same key, whose replay leads here to the refund's status by then. (The
   * simulator's refunds always succeed at once.)
   */
  private async refundOutcome(refund: Stripe.Refund, readBack: boolean): Promise<RefundResult> {
    switch (refund.status) {
      case "succeeded":
        return { status: "succeeded", providerRefundId: refund.id, amount: refund.amount };
      case "failed":
      case "canceled":
        return {
          status: "refused",
          code: refund.failure_reason || `refund_${refund.status}`,
          message: `Refund ${refund.id} ${refund.status}; nothing was refunded.`,
        };
    }
    if (readBack) {
      let current: Stripe.Refund;
      try {
        current = await this.stripe.refunds.retrieve(refund.id);
      } catch (error) {
        throw new PaymentProviderError(
          `Refund ${refund.id} is ${refund.status}, and reading it back failed: ${messageOf(error)}`,
          "unknown",
          { cause: error },
        );
      }
      return this.refundOutcome(current, false);
    }
    throw new PaymentProviderError(
      `Refund ${refund.id} is ${refund.status ?? "without a status"}; whether it goes through is not known yet`,
      "unknown",
    );
  }

  /**
   * After a 5xx, the refund made under this key, if any: its metadata
   * carries the key. Found, its outcome is the refund's, whatever the 5xx
   * said. Not found proves nothing (the next attempt may still make it).
   */
  private async findRefund(
    request: RefundRequest,
    failure: Stripe.errors.StripeAPIError,
  ): Promise<RefundResult> {
    let refunds: Stripe.Refund[];
    try {
      refunds = await this.allRefunds(request.providerPaymentId);
    } catch (lookup) {
      throw new PaymentProviderError(
        `The refund's outcome is unknown: ${failure.message} (and looking it up failed too)`,
        "unknown",
        { cause: lookup },
      );
    }
    const found = refunds.find(
      (refund) => refund.metadata?.[PROVIDER_KEY_METADATA] === request.idempotencyKey,
    );
    if (!found) {
      throw new PaymentProviderError(
        `The refund's outcome is unknown: ${failure.message}`,
        "unknown",
        {
          cause: failure,
        },
      );
    }
    // Listed just now, so its status is current: no reading back.
    return this.refundOutcome(found, false);
  }

  async findPayments(metadata: Record<string, string>): Promise<ProviderPayment[]> {
    // Before the try: metadata that cannot be searched for is the caller's bug, not a lookup failure.
    const query = metadataQuery(metadata);
    const found: ProviderPayment[] = [];
    try {
      let page: string | undefined;
      do {
        const result = await this.stripe.paymentIntents.search({
          query,
          limit: PAGE_SIZE,
          ...(page !== undefined && { page }),
        });
        found.push(...result.data.map(providerPayment));
        // An empty page that claims more would page forever.
        page =
          result.has_more && result.next_page && result.data.length > 0
            ? result.next_page
            : undefined;
      } while (page !== undefined && found.length < MAX_FOUND_PAYMENTS);
    } catch (error) {
      throw new PaymentLookupError(
        `Searching ${this.name} for payments failed: ${messageOf(error)}`,
        { cause: error },
      );
    }
    return found.slice(0, MAX_FOUND_PAYMENTS);
  }

  async chargesOf(paymentIntentId: string): Promise<ProviderCharge[]> {
    let charges: Stripe.Charge[];
    try {
      // One page: a PaymentIntent is charged once per payment method tried, far fewer than 100 times.
      charges = (
        await this.stripe.charges.list({ payment_intent: paymentIntentId, limit: PAGE_SIZE })
      ).data;
    } catch (error) {
      throw new PaymentLookupError(
        `Listing the charges of ${paymentIntentId} at ${this.name} failed: ${messageOf(error)}`,
        { cause: error },
      );
    }
    return charges.map((charge) => providerCharge(charge, paymentIntentId));
  }

  async refundsOf(paymentIntentId: string): Promise<ProviderRefund[]> {
    let refunds: Stripe.Refund[];
    try {
      refunds = await this.allRefunds(paymentIntentId);
    } catch (error) {
      throw new PaymentLookupError(
        `Listing the refunds of ${paymentIntentId} at ${this.name} failed: ${messageOf(error)}`,
        { cause: error },
      );
    }
    return refunds.map((refund) => providerRefund(refund, paymentIntentId));
  }

  /**
   * Every refund of a PaymentIntent, newest first, page after page: unlike
   * its charges, a payment may be refunded in any number of parts.
   */
  private async allRefunds(paymentIntentId: string): Promise<Stripe.Refund[]> {
    const refunds: Stripe.Refund[] = [];
    let startingAfter: string | undefined;
    for (;;) {
      const page = await this.stripe.refunds.list({
        payment_intent: paymentIntentId,
        limit: PAGE_SIZE,
        ...(startingAfter !== undefined && { starting_after: startingAfter }),
      });
      refunds.push(...page.data);
      const last = page.data.at(-1);
      // An empty page that claims more would page forever.
      if (!page.has_more || !last) return refunds;
      startingAfter = last.id;
    }
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * A confirmed PaymentIntent's outcome: paid, declined (by the card's issuer,
 * or a failed authentication), or waiting for the shopper at the redirect
 * 3-D Secure gives; undefined in any other state.
 */
function settledOrWaiting(intent: Stripe.PaymentIntent): ChargeResult | undefined {
  if (intent.status === "succeeded") return { status: "succeeded", providerPaymentId: intent.id };
  const error = intent.last_payment_error;
  if (intent.status === "requires_payment_method" && error) {
    return {
      status: "declined",
      providerPaymentId: intent.id,
      declineCode: error.decline_code || error.code || "card_declined",
      message: error.message ?? "Your card was declined.",
    };
  }
  const redirectUrl = intent.next_action?.redirect_to_url?.url;
  if (intent.status === "requires_action") {
    if (redirectUrl)
      return { status: "requires_action", providerPaymentId: intent.id, redirectUrl };
    // Stripe.js's own step (use_stripe_sdk, without a return_url): the shop has none.
    return {
      status: "declined",
      providerPaymentId: intent.id,
      declineCode: "authentication_required",
      message: "Your card needs authentication, which this shop could not start.",
    };
  }
  return undefined;
}

/** A PaymentIntent found by search: what its charge came to, where that is settled. */
function outcomeOfFoundIntent(intent: Stripe.PaymentIntent): ChargeResult {
  const outcome = settledOrWaiting(intent);
  if (outcome) return outcome;
  throw new PaymentProviderError(
    `PaymentIntent ${intent.id} is in status ${intent.status}; its outcome is not settled yet`,
    "unknown",
  );
}

/** A refund's error: Stripe's refusal of the refund itself, or thrown as unknown or rejected. */
function refusalOrThrow(error: unknown): RefundResult {
  if (
    error instanceof Stripe.errors.StripeInvalidRequestError &&
    error.code !== undefined &&
    REFUND_REFUSAL_CODES.has(error.code)
  ) {
    return { status: "refused", code: error.code, message: error.message };
  }
  return throwUnknownOrRejected(error, "refund");
}

function declineOrThrow(error: unknown): ChargeResult {
  if (error instanceof Stripe.errors.StripeCardError) {
    const providerPaymentId = error.payment_intent?.id ?? error.charge ?? error.requestId;
    if (!providerPaymentId)
      throw new PaymentProviderError("A card error named no payment", "rejected", { cause: error });
    return {
      status: "declined",
      providerPaymentId,
      // decline_code says why the issuer declined; a failure that is not an
      // issuer decline (processing_error, expired_card…) has only a code.
      declineCode: error.decline_code || error.code || "card_declined",
      message: error.message,
    };
  }
  return throwUnknownOrRejected(error, "charge");
}

/** Any other failure of a charge or a refund: "unknown" where it may have happened, else "rejected". */
function throwUnknownOrRejected(error: unknown, what: "charge" | "refund"): never {
  // StripeAPIError covers 5xx and also 409 (the SDK has no class of its own
  // for "key in use": only 400/404 idempotency errors are StripeIdempotencyError).
  if (
    error instanceof Stripe.errors.StripeConnectionError ||
    error instanceof Stripe.errors.StripeAPIError ||
    error instanceof Stripe.errors.StripeRateLimitError ||
    error instanceof Stripe.errors.StripeIdempotencyError
  ) {
    throw new PaymentProviderError(
      `The ${what}'s outcome is unknown: ${error.message}`,
      "unknown",
      {
        cause: error,
      },
    );
  }
  if (error instanceof Stripe.errors.StripeError) {
    throw new PaymentProviderError(`Stripe rejected the ${what}: ${error.message}`, "rejected", {
      cause: error,
    });
  }
  // Not from Stripe's SDK at all: assume the worst, the money may have moved.
  throw new PaymentProviderError(
    `The ${what}'s outcome is unknown: ${messageOf(error)}`,
    "unknown",
    {
      cause: error,
    },
  );
}
