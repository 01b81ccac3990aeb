import { randomUUID } from "node:crypto";
import Stripe from "stripe";
import { beforeEach, describe, expect, it } from "vitest";
import type { ChargeRequest } from "@/lib/payments/provider";
import { ledgerFor, newSecretKey, setFaults, withTestSimulator } from "@/lib/testing/payment-simulator";
import { PaymentProviderError } from "@/lib/payments/provider";
import { PROVIDER_KEY_METADATA, StripePaymentProvider, type StripePaymentProviderOptions } from "@/lib/payments/stripe-provider";

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
  return new StripePaymentProvider({ secretKey: testAccountKey, simulatorUrl: simulator.url, ...options });
}

function chargeRequest(overrides: Partial<ChargeRequest> = {}): ChargeRequest {
  // Shaped like the provider key checkout.ts builds (paymentProviderKey).
  return { amount: 4950, currency: "usd", paymentMethod: "pm_card_visa", idempotencyKey: `oncepay:${randomUUID()}:${randomUUID()}`, ...overrides };
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
    expect(() => new StripePaymentProvider({ secretKey: "sk_live_123", simulatorUrl: simulator.url })).toThrow(/test-mode/);
  });

  it("maps a successful charge to succeeded with the payment intent's id", async () => {
    const request = chargeRequest();
    const result = await provider().charge(request);
    expect(result).toEqual({ status: "succeeded", providerPaymentId: expect.stringMatching(/^pi_/) });
    const ledger = await ledgerFor(simulator, { idempotencyKey: request.idempotencyKey });
    expect(ledger.payment_intents).toEqual([expect.objectContaining({ id: result.providerPaymentId, amount: 4950, status: "succeeded" })]);
    expect(ledger.charges).toHaveLength(1);
  });

  it.each([
    ["pm_card_chargeDeclined", "generic_decline", "Your card was declined."],
    ["pm_card_chargeDeclinedInsufficientFunds", "insufficient_funds", "Your card has insufficient funds."],
    ["pm_card_chargeDeclinedLostCard", "lost_card", "Your card was declined."],
    ["pm_card_chargeDeclinedExpiredCard", "expired_card", "Your card has expired."],
    // A definite failure whose answer Stripe saved under the key: asking
    // again could only replay it, so it is final for this checkout.
    ["pm_card_chargeDeclinedProcessingError", "processing_error", "An error occurred while processing your card. Try again in a little bit."],
  ])("maps %s to declined/%s, naming the declined payment intent", async (paymentMethod, declineCode, message) => {
    const request = chargeRequest({ paymentMethod });
    const result = await provider().charge(request);
    expect(result).toEqual({ status: "declined", providerPaymentId: expect.stringMatching(/^pi_/), declineCode, message });
    const ledger = await ledgerFor(simulator, { idempotencyKey: request.idempotencyKey });
    expect(ledger.payment_intents.map((intent) => intent.id)).toEqual([result.providerPaymentId]);
    expect(ledger.charges).toEqual([expect.objectContaining({ status: "failed" })]);
  });

  it("charges once for one provider key, however often it is asked (recovery, retries)", async () => {
    const stripe = provider();
    const request = chargeRequest();
    const first = await stripe.charge(request);
    const again = await stripe.charge(request);
    expect(again).toEqual(first);
    const declined = chargeRequest({ paymentMethod: "pm_card_chargeDeclined" });
    expect(await stripe.charge(declined)).toEqual(await stripe.charge(declined));
    expect((await ledgerFor(simulator, { idempotencyKey: request.idempotencyKey })).charges).toHaveLength(1);
    expect((await ledgerFor(simulator, { idempotencyKey: declined.idempotencyKey })).charges).toHaveLength(1);
  });

  it("rides out a 500 and a lost response with the SDK's retries, still one charge", async () => {
    const stripe = provider();
    for (const failNext of ["http_500", "drop_connection"] as const) {
      await setFaults(simulator, { failNext });
      const request = chargeRequest();
      expect(await stripe.charge(request)).toMatchObject({ status: "succeeded" });
      expect((await ledgerFor(simulator, { idempotencyKey: request.idempotencyKey })).charges).toHaveLength(1);
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
      expect((await ledgerFor(simulator, { idempotencyKey: request.idempotencyKey })).charges).toHaveLength(1);
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
      expect(await stripe.charge(request)).toEqual({ status: "succeeded", providerPaymentId: ledger.payment_intents[0]!.id });
      expect((await ledgerFor(simulator, { idempotencyKey: request.idempotencyKey })).charges).toHaveLength(1);
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
      const unreachable = new StripePaymentProvider({ secretKey: await newSecretKey(simulator), simulatorUrl: "http://127.0.0.1:9", maxNetworkRetries: 0 });
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
      const error = await providerErrorOf(provider({ secretKey: `${testAccountKey.slice(0, -1)}_` }).charge(request));
      expect(error.outcome).toBe("rejected");
      expect(error.cause).toBeInstanceOf(Stripe.errors.StripeAuthenticationError);
      expect((await ledgerFor(simulator, { idempotencyKey: request.idempotencyKey })).payment_intents).toHaveLength(0);
    });

    it("throws, outcome rejected, on an invalid request (an amount below Stripe's minimum)", async () => {
      const request = chargeRequest({ amount: 10 });
      expect((await providerErrorOf(provider().charge(request))).outcome).toBe("rejected");
      expect((await ledgerFor(simulator, { idempotencyKey: request.idempotencyKey })).charges).toHaveLength(0);
    });

  });

  describe("after Stripe's indeterminate 500 (stored and replayed under the key)", () => {
    it("tags every payment intent with its provider key, to be found again", async () => {
      const request = chargeRequest();
      await provider().charge(request);
      const [intent] = (await ledgerFor(simulator, { idempotencyKey: request.idempotencyKey })).payment_intents;
      expect(intent).toMatchObject({ metadata: { [PROVIDER_KEY_METADATA]: request.idempotencyKey } });
    });

    it("looks the charge up when the 500 came after it, and answers with what it finds", async () => {
      const request = chargeRequest();
      await setFaults(simulator, { failNext: "http_500_stored_after_charge" });
      const result = await provider().charge(request);
      const ledger = await ledgerFor(simulator, { idempotencyKey: request.idempotencyKey });
      expect(result).toEqual({ status: "succeeded", providerPaymentId: ledger.payment_intents[0]!.id });
      expect(ledger.charges).toHaveLength(1);
    });

    it("finds a decline the same way", async () => {
      const request = chargeRequest({ paymentMethod: "pm_card_chargeDeclinedInsufficientFunds" });
      await setFaults(simulator, { failNext: "http_500_stored_after_charge" });
      expect(await provider().charge(request)).toMatchObject({ status: "declined", declineCode: "insufficient_funds" });
    });

    it("when nothing was charged: unknown after the first 500, absent once the 500 is replayed and the search has caught up", async () => {
      const stripe = provider();
      const request = chargeRequest({ firstAskedAt: new Date() });
      await setFaults(simulator, { failNext: "http_500_stored_before_charge" });
      // The first 500 is not known to be stored: the next attempt might still charge.
      expect((await providerErrorOf(stripe.charge(request))).outcome).toBe("unknown");
      expect((await providerErrorOf(stripe.charge(request))).outcome).toBe("absent");
      expect((await ledgerFor(simulator, { idempotencyKey: request.idempotencyKey })).payment_intents).toHaveLength(0);
    });

    it("does not call a charge absent while the provider's search may still lag behind it, nor when its start is unknown", async () => {
      const request = chargeRequest({ firstAskedAt: new Date() });
      await setFaults(simulator, { failNext: "http_500_stored_before_charge" });
      const secretKey = await newSecretKey(simulator);
      const lagging = provider({ secretKey, searchLagMs: 60_000 });
      await providerErrorOf(lagging.charge(request));
      expect((await providerErrorOf(lagging.charge(request))).outcome).toBe("unknown");
      expect((await providerErrorOf(provider({ secretKey }).charge({ ...request, firstAskedAt: undefined }))).outcome).toBe("unknown");
      expect((await providerErrorOf(provider({ secretKey }).charge(request))).outcome).toBe("absent");
    });
  });

  // Stripe's idempotency_error: the provider key already stands for a charge
  // with other parameters. That charge may well exist, so it is no proof that
  // nothing was charged, and the key must not be released on it.
  it("throws, outcome unknown, when the provider key was used for another charge", async () => {
    const stripe = provider();
    const request = chargeRequest();
    await stripe.charge(request);
    const error = await providerErrorOf(stripe.charge({ ...request, amount: request.amount + 100 }));
    expect(error.outcome).toBe("unknown");
    expect(error.cause).toBeInstanceOf(Stripe.errors.StripeIdempotencyError);
  });
});
