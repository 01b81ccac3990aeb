import { randomUUID } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import Stripe from "stripe";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  PaymentLookupError,
  PaymentProviderError,
  refundResultSchema,
  type RefundRequest,
} from "@/lib/payments/provider";
import {
  PROVIDER_KEY_METADATA,
  StripePaymentProvider,
  type StripePaymentProviderOptions,
} from "@/lib/payments/stripe-provider";
import {
  newSecretKey,
  setFaults,
  startTestSimulator,
  stripeFor,
  withTestSimulator,
} from "@/lib/testing/payment-simulator";

/**
 * OncePay's refunds through the real Stripe SDK against the simulator: each
 * outcome mapped to a RefundResult or to an error that says whether the
 * refund may have happened, one refund per provider key, and a payment's
 * refunds read back for the ledger.
 */
const simulator = withTestSimulator();

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

/** A payment of `amount` made through the provider, as the checkout makes one. */
async function paid(amount = 4950, stripe = provider()): Promise<string> {
  const result = await stripe.charge({
    amount,
    currency: "usd",
    paymentMethod: "pm_card_visa",
    idempotencyKey: `oncepay:${randomUUID()}:${randomUUID()}`,
  });
  expect(result.status).toBe("succeeded");
  return result.providerPaymentId;
}

function refundRequest(providerPaymentId: string, amount: number): RefundRequest {
  // Shaped like the refund key the shop builds (refund:… after the account's prefix).
  return {
    providerPaymentId,
    amount,
    idempotencyKey: `oncepay:${randomUUID()}:refund:${randomUUID()}`,
  };
}

async function providerErrorOf(promise: Promise<unknown>): Promise<PaymentProviderError> {
  const error = await promise.then(
    () => expect.unreachable("the refund should have thrown"),
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(PaymentProviderError);
  return error as PaymentProviderError;
}

describe("StripePaymentProvider.refund", () => {
  it("refunds part of a payment, then the rest: succeeded, with each refund's id and amount", async () => {
    const stripe = provider();
    const payment = await paid(4950);
    const first = await stripe.refund(refundRequest(payment, 2000));
    expect(first).toEqual({
      status: "succeeded",
      providerRefundId: expect.stringMatching(/^re_/),
      amount: 2000,
    });
    const rest = await stripe.refund(refundRequest(payment, 2950));
    expect(rest).toMatchObject({ status: "succeeded", amount: 2950 });
    expect(rest.status === "succeeded" && rest.providerRefundId).not.toBe(
      first.status === "succeeded" && first.providerRefundId,
    );
    // What the shop keeps with its key reads back as it was written.
    expect(refundResultSchema.parse(JSON.parse(JSON.stringify(first)))).toEqual(first);
  });

  it("tags the refund with its provider key and asks for exactly the amount given", async () => {
    const payment = await paid(4950);
    const request = refundRequest(payment, 1234);
    const result = await provider().refund(request);
    const refund = await stripeFor(simulator, testAccountKey).refunds.retrieve(
      result.status === "succeeded" ? result.providerRefundId : "",
    );
    expect(refund).toMatchObject({
      amount: 1234,
      payment_intent: payment,
      metadata: { [PROVIDER_KEY_METADATA]: request.idempotencyKey },
    });
  });

  it("refunds once for one provider key, however often it is asked (recovery, retries)", async () => {
    const stripe = provider();
    const payment = await paid(4950);
    const request = refundRequest(payment, 1000);
    const results = [await stripe.refund(request), await stripe.refund(request)];
    expect(results[1]).toEqual(results[0]);
    expect((await stripe.refundsOf(payment)).map((refund) => refund.amount)).toEqual([1000]);
  });

  describe("when Stripe refuses the refund itself (nothing refunded)", () => {
    it("answers refused, amount_too_large, for more than the payment took or has left", async () => {
      const stripe = provider();
      const payment = await paid(4950);
      expect(await stripe.refund(refundRequest(payment, 5000))).toEqual({
        status: "refused",
        code: "amount_too_large",
        message: "Refund amount ($50.00) is greater than charge amount ($49.50)",
      });
      await stripe.refund(refundRequest(payment, 4000));
      expect(await stripe.refund(refundRequest(payment, 1000))).toMatchObject({
        status: "refused",
        code: "amount_too_large",
        message: expect.stringContaining("unrefunded amount on charge ($9.50)"),
      });
      expect((await stripe.refundsOf(payment)).map((refund) => refund.amount)).toEqual([4000]);
    });

    it("answers refused, charge_already_refunded, once nothing is left; the same key keeps answering it", async () => {
      const stripe = provider();
      const payment = await paid(4950);
      await stripe.refund(refundRequest(payment, 4950));
      const request = refundRequest(payment, 1);
      const refused = await stripe.refund(request);
      expect(refused).toMatchObject({ status: "refused", code: "charge_already_refunded" });
      expect(await stripe.refund(request)).toEqual(refused);
    });
  });

  describe("when the refund is refused as a request (rejected: nothing refunded, repeating will not help)", () => {
    it("throws rejected for a payment that did not succeed, and for one that does not exist", async () => {
      const stripe = provider();
      const declined = await stripe.charge({
        amount: 4950,
        currency: "usd",
        paymentMethod: "pm_card_chargeDeclined",
        idempotencyKey: `oncepay:${randomUUID()}:${randomUUID()}`,
      });
      for (const payment of [declined.providerPaymentId, "pi_doesnotexist"]) {
        const error = await providerErrorOf(stripe.refund(refundRequest(payment, 100)));
        expect(error.outcome).toBe("rejected");
        expect(error.cause).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
      }
    });

    it("throws rejected for another account's payment, and on a key the provider does not know", async () => {
      const payment = await paid(4950);
      const otherAccount = provider({ secretKey: await newSecretKey(simulator) });
      expect(
        (await providerErrorOf(otherAccount.refund(refundRequest(payment, 100)))).outcome,
      ).toBe("rejected");
      const typo = provider({ secretKey: `${testAccountKey.slice(0, -1)}_` });
      const error = await providerErrorOf(typo.refund(refundRequest(payment, 100)));
      expect(error.outcome).toBe("rejected");
      expect(error.cause).toBeInstanceOf(Stripe.errors.StripeAuthenticationError);
      expect(await provider().refundsOf(payment)).toEqual([]);
    });

    it.each([0, -5, 12.5, Number.NaN])(
      "throws rejected for an amount of %s without asking the provider",
      async (amount) => {
        // Unreachable: had it asked, the error would say the outcome is unknown.
        const stripe = provider({ simulatorUrl: "http://127.0.0.1:9", maxNetworkRetries: 0 });
        const error = await providerErrorOf(stripe.refund(refundRequest("pi_123", amount)));
        expect(error.outcome).toBe("rejected");
        expect(error.cause).toBeUndefined();
      },
    );
  });

  describe("when the outcome is unknown (it may have been refunded: ask again under the same key)", () => {
    it("throws unknown on 409 while the same key is still being refunded; asked again, the one refund", async () => {
      const secretKey = await newSecretKey(simulator);
      const patient = provider({ secretKey });
      const hasty = provider({ secretKey, maxNetworkRetries: 0 });
      const payment = await paid(4950, patient);
      const request = refundRequest(payment, 700);
      await setFaults(simulator, { latencyMs: 1500 });
      const first = patient.refund(request);
      await new Promise((resolve) => setTimeout(resolve, 300));

      const error = await providerErrorOf(hasty.refund(request));
      expect(error.outcome).toBe("unknown");
      expect(error.message).toMatch(/in-progress request using this Idempotency Key/);
      const result = await first;
      expect(result).toMatchObject({ status: "succeeded", amount: 700 });
      expect(await hasty.refund(request)).toEqual(result);
    });

    it("throws unknown when the key already stands for a refund of another amount (idempotency_error)", async () => {
      const stripe = provider();
      const payment = await paid(4950);
      const request = refundRequest(payment, 500);
      await stripe.refund(request);
      const error = await providerErrorOf(stripe.refund({ ...request, amount: 600 }));
      expect(error.outcome).toBe("unknown");
      expect(error.cause).toBeInstanceOf(Stripe.errors.StripeIdempotencyError);
    });

    it("throws unknown on a timeout, though the refund went through; asked again, that refund", async () => {
      const stripe = provider({ maxNetworkRetries: 0, timeoutMs: 300 });
      const payment = await paid(4950);
      const request = refundRequest(payment, 800);
      await setFaults(simulator, { latencyMs: 800 });
      expect((await providerErrorOf(stripe.refund(request))).outcome).toBe("unknown");

      await new Promise((resolve) => setTimeout(resolve, 1000));
      await setFaults(simulator, {});
      const [made] = await stripe.refundsOf(payment);
      expect(await stripe.refund(request)).toEqual({
        status: "succeeded",
        providerRefundId: made!.id,
        amount: 800,
      });
      expect(await stripe.refundsOf(payment)).toHaveLength(1);
    });

    it("throws unknown when the provider cannot be reached", async () => {
      const unreachable = provider({ simulatorUrl: "http://127.0.0.1:9", maxNetworkRetries: 0 });
      const error = await providerErrorOf(unreachable.refund(refundRequest("pi_123", 100)));
      expect(error.outcome).toBe("unknown");
      expect(error.cause).toBeInstanceOf(Stripe.errors.StripeConnectionError);
    });
  });

  describe("after Stripe's indeterminate 500 (stored and replayed under the key)", () => {
    it("finds the refund made before the 500 among the payment's refunds, by its key: succeeded", async () => {
      const stripe = provider();
      const payment = await paid(4950);
      const request = refundRequest(payment, 900);
      await setFaults(simulator, { failNext: "http_500_stored_after_charge" });
      const result = await stripe.refund(request);
      const [made] = await stripe.refundsOf(payment);
      expect(result).toEqual({ status: "succeeded", providerRefundId: made!.id, amount: 900 });
      // Every later attempt gets the stored 500 again, and finds the same refund.
      expect(await stripe.refund(request)).toEqual(result);
    });

    it("throws unknown when nothing was refunded under the key, and refunds nothing by asking", async () => {
      const stripe = provider();
      const payment = await paid(4950);
      // Another refund of the same payment, under another key, is not taken for this one.
      await stripe.refund(refundRequest(payment, 100));
      const request = refundRequest(payment, 900);
      await setFaults(simulator, { failNext: "http_500_stored_before_charge" });
      expect((await providerErrorOf(stripe.refund(request))).outcome).toBe("unknown");
      expect((await providerErrorOf(stripe.refund(request))).outcome).toBe("unknown");
      expect((await stripe.refundsOf(payment)).map((refund) => refund.amount)).toEqual([100]);
    });
  });
});

/**
 * The statuses a refund can have at Stripe that the simulator never gives
 * (its refunds succeed at once), answered by a stand-in for Stripe over
 * real HTTP: each create answers `created`, each read back `current`.
 */
describe("StripePaymentProvider.refund of a refund that is not (yet) succeeded", () => {
  let stub: http.Server;
  let stubUrl: string;
  let answers: { created: Partial<Stripe.Refund>; current: Partial<Stripe.Refund> };
  let reads: number;

  const refundBody = (fields: Partial<Stripe.Refund>) =>
    JSON.stringify({
      id: "re_stub",
      object: "refund",
      amount: 700,
      currency: "usd",
      created: 1_700_000_000,
      payment_intent: "pi_stub",
      metadata: {},
      ...fields,
    });

  beforeAll(async () => {
    stub = http.createServer((request, response) => {
      request.resume();
      request.on("end", () => {
        const reading = request.method === "GET" && request.url?.startsWith("/v1/refunds/re_stub");
        if (reading) reads++;
        response.writeHead(200, { "Content-Type": "application/json" });
        response.end(refundBody(reading ? answers.current : answers.created));
      });
    });
    await new Promise<void>((resolve) => stub.listen(0, "127.0.0.1", resolve));
    stubUrl = `http://127.0.0.1:${(stub.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => stub.close(resolve));
  });
  beforeEach(() => {
    reads = 0;
  });

  const stubProvider = () =>
    new StripePaymentProvider({
      secretKey: "sk_test_stub",
      simulatorUrl: stubUrl,
      maxNetworkRetries: 0,
    });

  it("reads a pending refund back: succeeded by now is succeeded", async () => {
    answers = { created: { status: "pending" }, current: { status: "succeeded" } };
    expect(await stubProvider().refund(refundRequest("pi_stub", 700))).toEqual({
      status: "succeeded",
      providerRefundId: "re_stub",
      amount: 700,
    });
    expect(reads).toBe(1);
  });

  it("throws unknown for a refund still pending when read back: not money gone for good, nor a refusal", async () => {
    answers = { created: { status: "pending" }, current: { status: "pending" } };
    const error = await providerErrorOf(stubProvider().refund(refundRequest("pi_stub", 700)));
    expect(error.outcome).toBe("unknown");
    expect(error.message).toMatch(/re_stub is pending/);
    expect(reads).toBe(1);
  });

  it("answers refused for a refund that failed or was canceled: nothing went back", async () => {
    answers = {
      created: { status: "pending" },
      current: { status: "failed", failure_reason: "expired_or_canceled_card" },
    };
    expect(await stubProvider().refund(refundRequest("pi_stub", 700))).toMatchObject({
      status: "refused",
      code: "expired_or_canceled_card",
    });
    answers = { created: { status: "canceled" }, current: { status: "canceled" } };
    expect(await stubProvider().refund(refundRequest("pi_stub", 700))).toMatchObject({
      status: "refused",
      code: "refund_canceled",
    });
  });

  it("takes a succeeded refund as it is, without reading it back", async () => {
    answers = { created: { status: "succeeded" }, current: { status: "failed" } };
    expect(await stubProvider().refund(refundRequest("pi_stub", 700))).toMatchObject({
      status: "succeeded",
    });
    expect(reads).toBe(0);
  });
});

describe("StripePaymentProvider.refundsOf", () => {
  it("reads a payment's refunds back, newest first, each with its amount, status and provider key", async () => {
    const stripe = provider();
    const payment = await paid(4950);
    const first = refundRequest(payment, 1000);
    const second = refundRequest(payment, 250);
    const made = [await stripe.refund(first), await stripe.refund(second)];
    expect(await stripe.refundsOf(payment)).toEqual(
      [made[1], made[0]].map((result, index) => ({
        id: result!.status === "succeeded" ? result!.providerRefundId : "",
        paymentIntentId: payment,
        amount: [250, 1000][index],
        currency: "usd",
        status: "succeeded",
        createdAt: expect.any(Date),
        metadata: { [PROVIDER_KEY_METADATA]: [second, first][index]!.idempotencyKey },
      })),
    );
    // Another payment's, or another account's, are not among them.
    expect(await stripe.refundsOf(await paid(4950))).toEqual([]);
    expect(await provider({ secretKey: await newSecretKey(simulator) }).refundsOf(payment)).toEqual(
      [],
    );
  });

  it("reads every page: more than Stripe's 100 a page", async () => {
    const stripe = provider();
    const payment = await paid(200);
    const sdk = stripeFor(simulator, testAccountKey);
    const made: string[] = [];
    for (let n = 0; n < 105; n++)
      made.push((await sdk.refunds.create({ payment_intent: payment, amount: 1 })).id);
    const read = await stripe.refundsOf(payment);
    expect(read.map((refund) => refund.id)).toEqual(made.reverse());
  });

  it("throws PaymentLookupError, with the cause, when the provider cannot be reached or refuses", async () => {
    const stopped = await startTestSimulator();
    await stopped.close();
    const unreachable = provider({ simulatorUrl: stopped.url, maxNetworkRetries: 0 });
    const typo = provider({ secretKey: `${testAccountKey.slice(0, -1)}_` });
    for (const [stripe, cause] of [
      [unreachable, Stripe.errors.StripeConnectionError],
      [typo, Stripe.errors.StripeAuthenticationError],
    ] as const) {
      const error = await stripe.refundsOf("pi_123").catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(PaymentLookupError);
      expect((error as PaymentLookupError).cause).toBeInstanceOf(cause);
    }
  });
});
