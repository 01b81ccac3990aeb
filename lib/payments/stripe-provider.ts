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
} from "@/lib/payments/provider";
import { metadataQuery, providerCharge, providerPayment } from "@/lib/payments/stripe-records";

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
 * It also reads the provider's records back (PaymentRecords: findPayments by
 * metadata, chargesOf a PaymentIntent), for the ledger that shows every order
 * was charged once. Stripe's search index lags behind new PaymentIntents
 * (under a minute normally), so there a charge made just now may be missing
 * from findPayments for a while; the simulator's search is immediately
 * consistent. Listing a PaymentIntent's charges does not go through search
 * and never lags.
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

export class StripePaymentProvider implements PaymentProvider, PaymentRecords {
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
          // Cards only, and no redirect-based methods: the shop has no page
          // to come back to, so a charge must finish within this one call.
          automatic_payment_methods: { enabled: true, allow_redirects: "never" },
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
    if (intent.status === "succeeded") return { status: "succeeded", providerPaymentId: intent.id };
    if (intent.status === "requires_action") {
      // 3-D Secure: the shop has no step for it, so the charge did not happen.
      return {
        status: "declined",
        providerPaymentId: intent.id,
        declineCode: "authentication_required",
        message: "Your card needs authentication, which this shop does not support.",
      };
    }
    // processing, requires_capture…: not a state a confirmed card payment
    // without manual capture ends in; a replay under the same key would only
    // repeat it, so someone has to look.
    throw new PaymentProviderError(
      `PaymentIntent ${intent.id} ended in status ${intent.status}`,
      "rejected",
    );
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
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** A PaymentIntent found by search: what its charge came to, where that is settled. */
function outcomeOfFoundIntent(intent: Stripe.PaymentIntent): ChargeResult {
  if (intent.status === "succeeded") return { status: "succeeded", providerPaymentId: intent.id };
  const error = intent.last_payment_error;
  if (intent.status === "requires_payment_method" && error?.type === "card_error") {
    return {
      status: "declined",
      providerPaymentId: intent.id,
      declineCode: error.decline_code || error.code || "card_declined",
      message: error.message ?? "Your card was declined.",
    };
  }
  throw new PaymentProviderError(
    `PaymentIntent ${intent.id} is in status ${intent.status}; its outcome is not settled yet`,
    "unknown",
  );
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
  // StripeAPIError covers 5xx and also 409 (the SDK has no class of its own
  // for "key in use": only 400/404 idempotency errors are StripeIdempotencyError).
  if (
    error instanceof Stripe.errors.StripeConnectionError ||
    error instanceof Stripe.errors.StripeAPIError ||
    error instanceof Stripe.errors.StripeRateLimitError ||
    error instanceof Stripe.errors.StripeIdempotencyError
  ) {
    throw new PaymentProviderError(`The charge's outcome is unknown: ${error.message}`, "unknown", {
      cause: error,
    });
  }
  if (error instanceof Stripe.errors.StripeError) {
    throw new PaymentProviderError(`Stripe rejected the charge: ${error.message}`, "rejected", {
      cause: error,
    });
  }
  // Not from Stripe's SDK at all: assume the worst, the charge may have gone through.
  throw new PaymentProviderError(
    `The charge's outcome is unknown: ${error instanceof Error ? error.message : String(error)}`,
    "unknown",
    { cause: error },
  );
}
