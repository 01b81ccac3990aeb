import { randomUUID } from "node:crypto";
import Stripe from "stripe";
import { beforeEach, describe, expect, it } from "vitest";
import type { ChargeRequest } from "@/lib/payments/provider";
import {
  ledgerFor,
  newSecretKey,
  setFaults,
  startTestSimulator,
  stripeFor,
  withTestSimulator,
} from "@/lib/testing/payment-simulator";
import { PaymentLookupError, PaymentProviderError } from "@/lib/payments/provider";
import {
  PROVIDER_KEY_METADATA,
  StripePaymentProvider,
  type StripePaymentProviderOptions,
} from "@/lib/payments/stripe-provider";

/**
 * OncePay's provider through the real Stripe SDK against the simulator: each
 * outcome mapped to a ChargeResult or to an error that says whether the
 * charge may have happened, and the same provider key never charging twice.
 */
const simulator = withTestSimulator();

// Each test its own account, unless it passes a secretKey to share one.
let testAccountKey: string;
beforeEach(async () => {
  testAccountKey = await newSecretKey(simulator);
});

function provider(options: Partial<StripePaymentProviderOptions> = {}) {
  return new StripePaymentProvider({
    secretKey: testAccountKey,
    simulatorUrl: simulator.url,
    ...options,
  });
}

function chargeRequest(overrides: Partial<ChargeRequest> = {}): ChargeRequest {
  // Shaped like the provider key checkout.ts builds (paymentProviderKey in lib/orders/provider-key.ts).
  return {
    amount: 4950,
    currency: "usd",
    paymentMethod: "pm_card_visa",
    idempotencyKey: `oncepay:${randomUUID()}:${randomUUID()}`,
    ...overrides,
  };
}

async function providerErrorOf(promise: Promise<unknown>): Promise<PaymentProviderError> {
  const error = await promise.then(
    () => expect.unreachable("the charge should have thrown"),
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(PaymentProviderError);
  return error as PaymentProviderError;
}

describe("StripePaymentProvider", () => {
  it("is named for where the money goes, and takes only test-mode keys", () => {
    expect(provider().name).toBe("stripe-simulator");
    expect(new StripePaymentProvider({ secretKey: "sk_test_123" }).name).toBe("stripe");
    expect(
      () => new StripePaymentProvider({ secretKey: "sk_live_123", simulatorUrl: simulator.url }),
    ).toThrow(/test-mode/);
  });

  it("maps a successful charge to succeeded with the payment intent's id", async () => {
    const request = chargeRequest();
    const result = await provider().charge(request);
    expect(result).toEqual({
      status: "succeeded",
      providerPaymentId: expect.stringMatching(/^pi_/),
    });
    const ledger = await ledgerFor(simulator, { idempotencyKey: request.idempotencyKey });
    expect(ledger.payment_intents).toEqual([
      expect.objectContaining({ id: result.providerPaymentId, amount: 4950, status: "succeeded" }),
    ]);
    expect(ledger.charges).toHaveLength(1);
  });

  it.each([
    ["pm_card_chargeDeclined", "generic_decline", "Your card was declined."],
    [
      "pm_card_chargeDeclinedInsufficientFunds",
      "insufficient_funds",
      "Your card has insufficient funds.",
    ],
    ["pm_card_chargeDeclinedLostCard", "lost_card", "Your card was declined."],
    ["pm_card_chargeDeclinedExpiredCard", "expired_card", "Your card has expired."],
    // A definite failure whose answer Stripe saved under the key: asking
    // again could only replay it, so it is final for this checkout.
    [
      "pm_card_chargeDeclinedProcessingError",
      "processing_error",
      "An error occurred while processing your card. Try again in a little bit.",
    ],
  ])(
    "maps %s to declined/%s, naming the declined payment intent",
    async (paymentMethod, declineCode, message) => {
      const request = chargeRequest({ paymentMethod });
      const result = await provider().charge(request);
      expect(result).toEqual({
        status: "declined",
        providerPaymentId: expect.stringMatching(/^pi_/),
        declineCode,
        message,
      });
      const ledger = await ledgerFor(simulator, { idempotencyKey: request.idempotencyKey });
      expect(ledger.payment_intents.map((intent) => intent.id)).toEqual([result.providerPaymentId]);
      expect(ledger.charges).toEqual([expect.objectContaining({ status: "failed" })]);
    },
  );

  it("charges once for one provider key, however often it is asked (recovery, retries)", async () => {
    const stripe = provider();
    const request = chargeRequest();
    const first = await stripe.charge(request);
    const again = await stripe.charge(request);
    expect(again).toEqual(first);
    const declined = chargeRequest({ paymentMethod: "pm_card_chargeDeclined" });
    expect(await stripe.charge(declined)).toEqual(await stripe.charge(declined));
    expect(
      (await ledgerFor(simulator, { idempotencyKey: request.idempotencyKey })).charges,
    ).toHaveLength(1);
    expect(
      (await ledgerFor(simulator, { idempotencyKey: declined.idempotencyKey })).charges,
    ).toHaveLength(1);
  });

  it("rides out a 500 and a lost response with the SDK's retries, still one charge", async () => {
    const stripe = provider();
    for (const failNext of ["http_500", "drop_connection"] as const) {
      await setFaults(simulator, { failNext });
      const request = chargeRequest();
      expect(await stripe.charge(request)).toMatchObject({ status: "succeeded" });
      expect(
        (await ledgerFor(simulator, { idempotencyKey: request.idempotencyKey })).charges,
      ).toHaveLength(1);
    }
  });

  describe("when the outcome is unknown", () => {
    it("throws on a 5xx without retries left; the same key later charges once", async () => {
      const stripe = provider({ maxNetworkRetries: 0 });
      const request = chargeRequest();
      await setFaults(simulator, { failNext: "http_500" });
      expect((await providerErrorOf(stripe.charge(request))).outcome).toBe("unknown");

      // What OncePay does next: keep its key in flight, and charge again
      // later with the same provider key.
      expect(await stripe.charge(request)).toMatchObject({ status: "succeeded" });
      expect(
        (await ledgerFor(simulator, { idempotencyKey: request.idempotencyKey })).charges,
      ).toHaveLength(1);
    });

    it("throws on a timeout, though the charge went through; the retry with the same key finds that charge", async () => {
      const stripe = provider({ maxNetworkRetries: 0, timeoutMs: 300 });
      const request = chargeRequest();
      await setFaults(simulator, { latencyMs: 800 });
      expect((await providerErrorOf(stripe.charge(request))).outcome).toBe("unknown");

      // The simulator finishes the charge after the client gave up.
      await new Promise((resolve) => setTimeout(resolve, 1000));
      await setFaults(simulator, {});
      const ledger = await ledgerFor(simulator, { idempotencyKey: request.idempotencyKey });
      expect(ledger.charges).toHaveLength(1);
      expect(await stripe.charge(request)).toEqual({
        status: "succeeded",
        providerPaymentId: ledger.payment_intents[0]!.id,
      });
      expect(
        (await ledgerFor(simulator, { idempotencyKey: request.idempotencyKey })).charges,
      ).toHaveLength(1);
    });

    it("throws on 409 (the same key still in progress elsewhere)", async () => {
      const secretKey = await newSecretKey(simulator);
      const patient = provider({ secretKey });
      const hasty = provider({ secretKey, maxNetworkRetries: 0 });
      const request = chargeRequest();
      await setFaults(simulator, { latencyMs: 1500 });
      const first = patient.charge(request);
      await new Promise((resolve) => setTimeout(resolve, 300));

      const error = await providerErrorOf(hasty.charge(request));
      expect(error.outcome).toBe("unknown");
      expect(error.message).toMatch(/in-progress request using this Idempotency Key/);
      const result = await first;
      expect(result).toMatchObject({ status: "succeeded" });
      expect(await hasty.charge(request)).toEqual(result);
    });

    it("throws when the simulator cannot be reached", async () => {
      const unreachable = new StripePaymentProvider({
        secretKey: await newSecretKey(simulator),
        simulatorUrl: "http://127.0.0.1:9",
        maxNetworkRetries: 0,
      });
      expect((await providerErrorOf(unreachable.charge(chargeRequest()))).outcome).toBe("unknown");
    });
  });

  describe("when the request is refused", () => {
    it("throws, outcome rejected, on a bad API key", async () => {
      const stripe = provider({ secretKey: "sk_test_has-a-dash" });
      expect((await providerErrorOf(stripe.charge(chargeRequest()))).outcome).toBe("rejected");
    });

    it("throws, outcome rejected, on a well-formed key the provider does not know (a typo)", async () => {
      const request = chargeRequest();
      const error = await providerErrorOf(
        provider({ secretKey: `${testAccountKey.slice(0, -1)}_` }).charge(request),
      );
      expect(error.outcome).toBe("rejected");
      expect(error.cause).toBeInstanceOf(Stripe.errors.StripeAuthenticationError);
      expect(
        (await ledgerFor(simulator, { idempotencyKey: request.idempotencyKey })).payment_intents,
      ).toHaveLength(0);
    });

    it("throws, outcome rejected, on an invalid request (an amount below Stripe's minimum)", async () => {
      const request = chargeRequest({ amount: 10 });
      expect((await providerErrorOf(provider().charge(request))).outcome).toBe("rejected");
      expect(
        (await ledgerFor(simulator, { idempotencyKey: request.idempotencyKey })).charges,
      ).toHaveLength(0);
    });
  });

  describe("after Stripe's indeterminate 500 (stored and replayed under the key)", () => {
    it("tags every payment intent with its provider key, to be found again", async () => {
      const request = chargeRequest();
      await provider().charge(request);
      const [intent] = (await ledgerFor(simulator, { idempotencyKey: request.idempotencyKey }))
        .payment_intents;
      expect(intent).toMatchObject({
        metadata: { [PROVIDER_KEY_METADATA]: request.idempotencyKey },
      });
    });

    it("looks the charge up when the 500 came after it, and answers with what it finds", async () => {
      const request = chargeRequest();
      await setFaults(simulator, { failNext: "http_500_stored_after_charge" });
      const result = await provider().charge(request);
      const ledger = await ledgerFor(simulator, { idempotencyKey: request.idempotencyKey });
      expect(result).toEqual({
        status: "succeeded",
        providerPaymentId: ledger.payment_intents[0]!.id,
      });
      expect(ledger.charges).toHaveLength(1);
    });

    it("finds a decline the same way", async () => {
      const request = chargeRequest({ paymentMethod: "pm_card_chargeDeclinedInsufficientFunds" });
      await setFaults(simulator, { failNext: "http_500_stored_after_charge" });
      expect(await provider().charge(request)).toMatchObject({
        status: "declined",
        declineCode: "insufficient_funds",
      });
    });

    it("when nothing was charged: unknown after the first 500, absent once the 500 is replayed and the search has caught up", async () => {
      const stripe = provider();
      const request = chargeRequest({ firstAskedAt: new Date() });
      await setFaults(simulator, { failNext: "http_500_stored_before_charge" });
      // The first 500 is not known to be stored: the next attempt might still charge.
      expect((await providerErrorOf(stripe.charge(request))).outcome).toBe("unknown");
      expect((await providerErrorOf(stripe.charge(request))).outcome).toBe("absent");
      expect(
        (await ledgerFor(simulator, { idempotencyKey: request.idempotencyKey })).payment_intents,
      ).toHaveLength(0);
    });

    it("does not call a charge absent while the provider's search may still lag behind it, nor when its start is unknown", async () => {
      const request = chargeRequest({ firstAskedAt: new Date() });
      await setFaults(simulator, { failNext: "http_500_stored_before_charge" });
      const secretKey = await newSecretKey(simulator);
      const lagging = provider({ secretKey, searchLagMs: 60_000 });
      await providerErrorOf(lagging.charge(request));
      expect((await providerErrorOf(lagging.charge(request))).outcome).toBe("unknown");
      expect(
        (
          await providerErrorOf(
            provider({ secretKey }).charge({ ...request, firstAskedAt: undefined }),
          )
        ).outcome,
      ).toBe("unknown");
      expect((await providerErrorOf(provider({ secretKey }).charge(request))).outcome).toBe(
        "absent",
      );
    });
  });

  // Stripe's idempotency_error: the provider key already stands for a charge
  // with other parameters. That charge may well exist, so it is no proof that
  // nothing was charged, and the key must not be released on it.
  it("throws, outcome unknown, when the provider key was used for another charge", async () => {
    const stripe = provider();
    const request = chargeRequest();
    await stripe.charge(request);
    const error = await providerErrorOf(
      stripe.charge({ ...request, amount: request.amount + 100 }),
    );
    expect(error.outcome).toBe("unknown");
    expect(error.cause).toBeInstanceOf(Stripe.errors.StripeIdempotencyError);
  });
});

describe("charge() with extra metadata (the lab's tags)", () => {
  it("puts it on the payment intent, beside the provider key, which wins over a same-named entry", async () => {
    const request = chargeRequest({
      metadata: { lab_run: randomUUID(), lab_strategy: "naive", [PROVIDER_KEY_METADATA]: "forged" },
    });
    await provider().charge(request);
    const [intent] = (await ledgerFor(simulator, { idempotencyKey: request.idempotencyKey }))
      .payment_intents;
    expect(intent!.metadata).toEqual({
      lab_run: request.metadata!.lab_run,
      lab_strategy: "naive",
      [PROVIDER_KEY_METADATA]: request.idempotencyKey,
    });
  });

  // Stripe compares the parameters sent under one key: a resumed checkout
  // must send exactly what its first attempt sent, before this option existed too.
  it("without it, sends the provider key alone: the very parameters a plain SDK call sends, so the call replays", async () => {
    const request = chargeRequest();
    const result = await provider().charge(request);
    const [intent] = (await ledgerFor(simulator, { idempotencyKey: request.idempotencyKey }))
      .payment_intents;
    expect(intent!.metadata).toEqual({ [PROVIDER_KEY_METADATA]: request.idempotencyKey });

    const replayed = await stripeFor(simulator, testAccountKey).paymentIntents.create(
      {
        amount: request.amount,
        currency: request.currency,
        payment_method: request.paymentMethod,
        confirm: true,
        automatic_payment_methods: { enabled: true, allow_redirects: "never" },
        metadata: { [PROVIDER_KEY_METADATA]: request.idempotencyKey },
      },
      { idempotencyKey: request.idempotencyKey },
    );
    expect(replayed.id).toBe(result.providerPaymentId);
    expect(replayed.lastResponse.headers["idempotent-replayed"]).toBe("true");
  });
});

describe("reading the provider's records back", () => {
  it("finds exactly the payments whose metadata holds every pair asked for, newest first", async () => {
    const stripe = provider();
    const run = randomUUID();
    const tagged = [];
    for (let index = 0; index < 3; index++)
      tagged.push(
        await stripe.charge(chargeRequest({ metadata: { lab_run: run, lab_strategy: "naive" } })),
      );
    await stripe.charge(chargeRequest({ metadata: { lab_run: run, lab_strategy: "careful" } }));
    await stripe.charge(
      chargeRequest({ metadata: { lab_run: randomUUID(), lab_strategy: "naive" } }),
    );
    await stripe.charge(chargeRequest());

    const found = await stripe.findPayments({ lab_run: run, lab_strategy: "naive" });
    expect(found.map((payment) => payment.id).toSorted()).toEqual(
      tagged.map((result) => result.providerPaymentId).toSorted(),
    );
    for (const payment of found) {
      expect(payment).toEqual({
        id: expect.stringMatching(/^pi_/),
        status: "succeeded",
        amount: 4950,
        currency: "usd",
        createdAt: expect.any(Date),
        metadata: {
          lab_run: run,
          lab_strategy: "naive",
          [PROVIDER_KEY_METADATA]: expect.stringMatching(/^oncepay:/),
        },
      });
      expect(Math.abs(payment.createdAt.getTime() - Date.now())).toBeLessThan(60_000);
    }
    const created = found.map((payment) => payment.createdAt.getTime());
    expect(created).toEqual(created.toSorted((a, b) => b - a));
    expect(await stripe.findPayments({ lab_run: randomUUID() })).toEqual([]);
  });

  it("pages past the search's 100 per answer", async () => {
    const stripe = provider();
    const run = randomUUID();
    const charged: string[] = [];
    for (let start = 0; start < 120; start += 20) {
      const batch = await Promise.all(
        Array.from({ length: 20 }, () =>
          stripe.charge(chargeRequest({ metadata: { lab_run: run } })),
        ),
      );
      charged.push(...batch.map((result) => result.providerPaymentId));
    }
    const found = await stripe.findPayments({ lab_run: run });
    expect(found).toHaveLength(120);
    expect(new Set(found.map((payment) => payment.id))).toEqual(new Set(charged));
  });

  it("lists the charge of a payment, succeeded or declined with its failure code", async () => {
    const stripe = provider();
    const paid = await stripe.charge(chargeRequest());
    expect(await stripe.chargesOf(paid.providerPaymentId)).toEqual([
      {
        id: expect.stringMatching(/^ch_/),
        paymentIntentId: paid.providerPaymentId,
        status: "succeeded",
        amount: 4950,
        currency: "usd",
        failureCode: null,
        createdAt: expect.any(Date),
      },
    ]);
    const declined = await stripe.charge(
      chargeRequest({ paymentMethod: "pm_card_chargeDeclinedInsufficientFunds" }),
    );
    expect(await stripe.chargesOf(declined.providerPaymentId)).toEqual([
      expect.objectContaining({
        paymentIntentId: declined.providerPaymentId,
        status: "failed",
        failureCode: "card_declined",
      }),
    ]);
    // Another account's payment is not there to read.
    expect(
      await provider({ secretKey: await newSecretKey(simulator) }).chargesOf(
        paid.providerPaymentId,
      ),
    ).toEqual([]);
  });

  it("throws PaymentLookupError, with the cause, when the provider cannot be reached", async () => {
    const stopped = await startTestSimulator();
    await stopped.close();
    const stripe = provider({ simulatorUrl: stopped.url, maxNetworkRetries: 0 });
    for (const lookup of [
      stripe.findPayments({ lab_run: randomUUID() }),
      stripe.chargesOf("pi_123"),
    ]) {
      const error = await lookup.then(
        () => expect.unreachable("the lookup should have failed"),
        (caught: unknown) => caught,
      );
      expect(error).toBeInstanceOf(PaymentLookupError);
      expect((error as PaymentLookupError).cause).toBeInstanceOf(
        Stripe.errors.StripeConnectionError,
      );
    }
  });

  it("throws PaymentLookupError when the provider refuses (an unknown key)", async () => {
    const error = await provider({ secretKey: `${testAccountKey.slice(0, -1)}_` })
      .findPayments({ lab_run: randomUUID() })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(PaymentLookupError);
    expect((error as PaymentLookupError).cause).toBeInstanceOf(
      Stripe.errors.StripeAuthenticationError,
    );
  });

  // Written into the query language: a quote would end the value and let the rest be read as clauses.
  it.each([
    [{ lab_run: "x' OR status:'succeeded" }],
    [{ lab_run: 'x"' }],
    [{ lab_run: "a b" }],
    [{ lab_run: "" }],
    [{ "lab_run']:'x": "y" }],
    [{}],
  ])("refuses to search for %j before asking the provider anything", async (metadata) => {
    // Unreachable: had it asked, the answer would be a PaymentLookupError.
    const stripe = provider({ simulatorUrl: "http://127.0.0.1:9", maxNetworkRetries: 0 });
    const error = await stripe.findPayments(metadata).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(Error);
    expect(error).not.toBeInstanceOf(PaymentLookupError);
    expect((error as Error).message).toMatch(/A-Za-z0-9|at least one/);
  });
});
