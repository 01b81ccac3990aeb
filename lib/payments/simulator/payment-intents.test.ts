import { randomUUID } from "node:crypto";
import Stripe from "stripe";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { newAdminKey } from "@/lib/payments/simulator/admin-key";
import { randomBase62 } from "@/lib/payments/simulator/ids";
import { startPaymentSimulator, type PaymentSimulator } from "@/lib/payments/simulator/server";
import {
  adminFetch,
  ledgerFor,
  newApiKeys,
  newSecretKey,
  postIntent,
  startTestSimulator,
  stripeFor,
} from "@/lib/testing/payment-simulator";

/**
 * The simulator's Stripe API through the official SDK: what a charge with
 * each test card returns, what lands in the ledger, and who may see it.
 */
let simulator: PaymentSimulator;

beforeAll(async () => {
  simulator = await startTestSimulator();
});

afterAll(async () => {
  await simulator?.close();
});

const charge = (paymentMethod: string) => ({
  amount: 1900,
  currency: "usd",
  payment_method: paymentMethod,
  confirm: true,
  automatic_payment_methods: { enabled: true, allow_redirects: "never" as const },
});

async function cardErrorOf(promise: Promise<unknown>): Promise<Stripe.errors.StripeCardError> {
  const error = await promise.then(
    () => expect.unreachable("the charge should have been declined"),
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(Stripe.errors.StripeCardError);
  return error as Stripe.errors.StripeCardError;
}

describe("POST /v1/payment_intents with confirm=true", () => {
  it("charges pm_card_visa: a succeeded intent with its charge, and a Request-Id", async () => {
    const stripe = stripeFor(simulator, await newSecretKey(simulator));
    const key = randomUUID();
    const intent = await stripe.paymentIntents.create(
      { ...charge("pm_card_visa"), metadata: { order: "42" } },
      { idempotencyKey: key },
    );

    expect(intent).toMatchObject({
      object: "payment_intent",
      amount: 1900,
      amount_received: 1900,
      currency: "usd",
      status: "succeeded",
      payment_method: "pm_card_visa",
      livemode: false,
      metadata: { order: "42" },
    });
    expect(intent.id).toMatch(/^pi_[0-9A-Za-z]{24}$/);
    expect(intent.latest_charge).toMatch(/^ch_[0-9A-Za-z]{24}$/);
    expect(intent.created).toBeGreaterThan(1_600_000_000);
    expect(intent.lastResponse.requestId).toMatch(/^req_[0-9A-Za-z]{14}$/);
    expect(intent.lastResponse.statusCode).toBe(200);

    const ledger = await ledgerFor(simulator, { idempotencyKey: key });
    expect(ledger.payment_intents.map((row) => row.id)).toEqual([intent.id]);
    expect(ledger.charges).toEqual([
      expect.objectContaining({
        id: intent.latest_charge,
        status: "succeeded",
        payment_intent: intent.id,
      }),
    ]);

    const fetched = await stripe.paymentIntents.retrieve(intent.id);
    expect(fetched).toMatchObject({
      id: intent.id,
      status: "succeeded",
      amount: 1900,
      latest_charge: intent.latest_charge,
    });
  });

  it.each([
    "pm_card_visa_debit",
    "pm_card_mastercard",
    "pm_card_mastercard_debit",
    "pm_card_amex",
    "pm_card_discover",
  ])("charges %s too", async (paymentMethod) => {
    const stripe = stripeFor(simulator, await newSecretKey(simulator));
    const key = randomUUID();
    const intent = await stripe.paymentIntents.create(charge(paymentMethod), {
      idempotencyKey: key,
    });
    expect(intent).toMatchObject({
      status: "succeeded",
      payment_method: paymentMethod,
      amount_received: 1900,
    });
    expect((await ledgerFor(simulator, { idempotencyKey: key })).charges).toEqual([
      expect.objectContaining({ status: "succeeded", payment_method: paymentMethod }),
    ]);
  });

  // Stripe's test cards: https://docs.stripe.com/testing#declined-payments
  const DECLINED = "Your card was declined.";
  it.each([
    ["pm_card_chargeDeclined", "0002", "card_declined", "generic_decline", DECLINED, undefined],
    [
      "pm_card_visa_chargeDeclined",
      "0002",
      "card_declined",
      "generic_decline",
      DECLINED,
      undefined,
    ],
    [
      "pm_card_chargeDeclinedInsufficientFunds",
      "9995",
      "card_declined",
      "insufficient_funds",
      "Your card has insufficient funds.",
      undefined,
    ],
    [
      "pm_card_visa_chargeDeclinedInsufficientFunds",
      "9995",
      "card_declined",
      "insufficient_funds",
      "Your card has insufficient funds.",
      undefined,
    ],
    ["pm_card_chargeDeclinedLostCard", "9987", "card_declined", "lost_card", DECLINED, undefined],
    [
      "pm_card_visa_chargeDeclinedLostCard",
      "9987",
      "card_declined",
      "lost_card",
      DECLINED,
      undefined,
    ],
    [
      "pm_card_chargeDeclinedStolenCard",
      "9979",
      "card_declined",
      "stolen_card",
      DECLINED,
      undefined,
    ],
    [
      "pm_card_visa_chargeDeclinedStolenCard",
      "9979",
      "card_declined",
      "stolen_card",
      DECLINED,
      undefined,
    ],
    [
      "pm_card_chargeDeclinedFraudulent",
      "0019",
      "card_declined",
      "fraudulent",
      DECLINED,
      undefined,
    ],
    [
      "pm_card_chargeDeclinedExpiredCard",
      "0069",
      "expired_card",
      "expired_card",
      "Your card has expired.",
      "exp_month",
    ],
    [
      "pm_card_chargeDeclinedIncorrectCvc",
      "0127",
      "incorrect_cvc",
      "incorrect_cvc",
      "Your card's security code is incorrect.",
      "cvc",
    ],
    [
      "pm_card_chargeDeclinedProcessingError",
      "0119",
      "processing_error",
      undefined,
      "An error occurred while processing your card. Try again in a little bit.",
      undefined,
    ],
  ])(
    "declines %s (…%s) with 402 %s/%s, and still records the intent and a failed charge",
    async (paymentMethod, last4, code, declineCode, message, param) => {
      const stripe = stripeFor(simulator, await newSecretKey(simulator));
      const key = randomUUID();
      const error = await cardErrorOf(
        stripe.paymentIntents.create(charge(paymentMethod), { idempotencyKey: key }),
      );

      expect(error.statusCode).toBe(402);
      expect(error.code).toBe(code);
      expect(error.raw).toMatchObject({ type: "card_error", code, message });
      expect((error.raw as { decline_code?: string }).decline_code).toBe(declineCode);
      expect(error.param).toBe(param);
      expect(error.message).toBe(message);
      expect(error.payment_method).toMatchObject({
        id: paymentMethod,
        card: { brand: "visa", last4 },
      });
      const intent = error.payment_intent!;
      expect(intent).toMatchObject({
        status: "requires_payment_method",
        amount_received: 0,
        payment_method: null,
        latest_charge: error.charge,
      });
      expect(intent.last_payment_error).toMatchObject({ code, message });

      const ledger = await ledgerFor(simulator, { idempotencyKey: key });
      expect(ledger.payment_intents).toEqual([
        expect.objectContaining({ id: intent.id, status: "requires_payment_method" }),
      ]);
      expect(ledger.charges).toEqual([
        expect.objectContaining({
          id: error.charge,
          status: "failed",
          failure_code: code,
          outcome: expect.objectContaining({ reason: declineCode ?? code }),
        }),
      ]);
      expect(await stripe.paymentIntents.retrieve(intent.id)).toMatchObject({
        status: "requires_payment_method",
      });
    },
  );

  it("creates without charging when confirm is not set", async () => {
    const stripe = stripeFor(simulator, await newSecretKey(simulator));
    const key = randomUUID();
    const intent = await stripe.paymentIntents.create(
      { amount: 500, currency: "EUR", payment_method: "pm_card_visa" },
      { idempotencyKey: key },
    );
    expect(intent).toMatchObject({
      status: "requires_confirmation",
      currency: "eur",
      latest_charge: null,
    });
    expect((await ledgerFor(simulator, { idempotencyKey: key })).charges).toEqual([]);
  });
});

describe("bad requests", () => {
  // Stripe's codes, or none where Stripe sends none (errors.test.ts checks the list).
  it.each([
    ["a missing amount", "currency=usd", "amount", "parameter_missing"],
    ["an empty amount", "amount=&currency=usd", "amount", "parameter_invalid_empty"],
    ["a non-integer amount", "amount=19.00&currency=usd", "amount", "parameter_invalid_integer"],
    ["an amount under the minimum", "amount=49&currency=usd", "amount", "amount_too_small"],
    ["an amount over the maximum", "amount=100000000&currency=usd", "amount", "amount_too_large"],
    [
      "a blank currency",
      "amount=1900&currency=%20%20",
      "currency",
      "parameter_invalid_string_blank",
    ],
    ["a bad currency", "amount=1900&currency=dollars", "currency", undefined],
    [
      "an unknown parameter",
      "amount=1900&currency=usd&customer=cus_1",
      "customer",
      "parameter_unknown",
    ],
    [
      "an unknown nested parameter",
      "amount=1900&currency=usd&automatic_payment_methods[enabled]=true&automatic_payment_methods[x]=1",
      "automatic_payment_methods[x]",
      "parameter_unknown",
    ],
    [
      "automatic_payment_methods with payment_method_types",
      "amount=1900&currency=usd&automatic_payment_methods[enabled]=true&payment_method_types[]=card",
      "payment_method_types",
      "parameters_exclusive",
    ],
    [
      "a payment method type other than card",
      "amount=1900&currency=usd&payment_method_types[]=sepa_debit",
      "payment_method_types",
      "payment_intent_invalid_parameter",
    ],
    [
      "an unknown payment method",
      "amount=1900&currency=usd&payment_method=pm_card_nope&confirm=true",
      "payment_method",
      "resource_missing",
    ],
    [
      "confirm without a payment method",
      "amount=1900&currency=usd&confirm=true",
      "payment_method",
      "payment_intent_unexpected_state",
    ],
    ["a bad boolean", "amount=1900&currency=usd&confirm=yes", "confirm", undefined],
    ["nested metadata", "amount=1900&currency=usd&metadata[a][b]=c", "metadata[a]", undefined],
  ])("answers 400 invalid_request_error for %s (code %s)", async (_case, body, param, code) => {
    const answer = await postIntent(simulator, { secretKey: await newSecretKey(simulator), body });
    expect(answer.status).toBe(400);
    expect(answer.headers.get("request-id")).toMatch(/^req_/);
    const { error } = JSON.parse(answer.text) as {
      error: { type: string; param?: string; code?: string; doc_url?: string };
    };
    expect(error).toMatchObject({ type: "invalid_request_error", param });
    expect(error.code).toBe(code);
    expect(error.doc_url).toBe(
      code && `https://stripe.com/docs/error-codes/${code.replaceAll("_", "-")}`,
    );
  });

  it("answers 400 for a malformed form body and for a JSON body", async () => {
    const malformed = await postIntent(simulator, {
      secretKey: await newSecretKey(simulator),
      body: "amount=1900&currency=usd&a[b=1",
    });
    expect(malformed.status).toBe(400);
    expect(JSON.parse(malformed.text).error).toMatchObject({
      type: "invalid_request_error",
      message: expect.stringMatching(/Invalid parameter name/),
    });
    const json = await postIntent(simulator, {
      secretKey: await newSecretKey(simulator),
      body: '{"amount":1900}',
      headers: { "Content-Type": "application/json" },
    });
    expect(json.status).toBe(400);
  });

  it("maps to the SDK's StripeInvalidRequestError", async () => {
    const stripe = stripeFor(simulator, await newSecretKey(simulator));
    const error = await stripe.paymentIntents
      .create({ amount: 10, currency: "usd" })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    expect(error).toMatchObject({ statusCode: 400, code: "amount_too_small", param: "amount" });
  });

  it("answers 404 for an unknown URL and an unknown payment intent", async () => {
    const secretKey = await newSecretKey(simulator);
    const unknownUrl = await fetch(`${simulator.url}/v1/customers`, {
      method: "POST",
      headers: { Authorization: `Bearer ${secretKey}` },
    });
    expect(unknownUrl.status).toBe(404);
    const error = await stripeFor(simulator, secretKey)
      .paymentIntents.retrieve("pi_doesnotexist")
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    expect(error).toMatchObject({ statusCode: 404, code: "resource_missing" });
  });
});

describe("API keys", () => {
  it("answers 401 without an API key, with Stripe's message and a Request-Id", async () => {
    const answer = await postIntent(simulator, { body: "amount=1900&currency=usd" });
    expect(answer.status).toBe(401);
    expect(answer.headers.get("request-id")).toMatch(/^req_/);
    expect(answer.headers.get("www-authenticate")).toMatch(/^Bearer/);
    expect(JSON.parse(answer.text)).toEqual({
      error: {
        type: "invalid_request_error",
        message: expect.stringMatching(/^You did not provide an API key/),
      },
    });
  });

  it("refuses malformed and live keys (StripeAuthenticationError in the SDK)", async () => {
    for (const secretKey of [
      "sk_live_abcdefghijklmnop",
      "rk_live_abcdefghijklmnop",
      "pk_test_abcdefghijklmnop",
      "nonsense",
    ]) {
      const error = await stripeFor(simulator, secretKey)
        .paymentIntents.create(charge("pm_card_visa"))
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(Stripe.errors.StripeAuthenticationError);
      expect(error).toMatchObject({ statusCode: 401 });
      if (secretKey.includes("_live_"))
        expect((error as Error).message).toMatch(/accepts only test-mode keys/);
    }
  });

  it("refuses a well-formed key it was never given (a typo): 401, and no account or objects appear", async () => {
    const typo = `${await newSecretKey(simulator)}x`;
    const key = randomUUID();
    for (let attempt = 0; attempt < 2; attempt++) {
      const answer = await postIntent(simulator, {
        secretKey: typo,
        key,
        body: "amount=1900&currency=usd&payment_method=pm_card_visa&confirm=true",
      });
      expect(answer.status).toBe(401);
      expect(answer.headers.get("www-authenticate")).toMatch(/^Bearer/);
      expect(JSON.parse(answer.text)).toEqual({
        error: {
          type: "invalid_request_error",
          message: `Invalid API Key provided: sk_test_****${typo.slice(-4)}.`,
        },
      });
    }
    expect(await ledgerFor(simulator, { idempotencyKey: key })).toMatchObject({
      payment_intents: [],
      charges: [],
    });
    const error = await stripeFor(simulator, typo)
      .paymentIntents.search({ query: "status:'succeeded'" })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(Stripe.errors.StripeAuthenticationError);
  });

  it("registers an account with a secret and a restricted key (POST /_simulator/api_keys); both reach the same objects", async () => {
    const response = await adminFetch(simulator, "/_simulator/api_keys", { method: "POST" });
    expect(response.status).toBe(201);
    const keys = (await response.json()) as { secret_key: string; restricted_key: string };
    expect(keys).toEqual({
      secret_key: expect.stringMatching(/^sk_test_[0-9A-Za-z]{99}$/),
      restricted_key: expect.stringMatching(/^rk_test_[0-9A-Za-z]{99}$/),
    });

    const restricted = stripeFor(simulator, keys.restricted_key);
    const key = randomUUID();
    const intent = await restricted.paymentIntents.create(charge("pm_card_visa"), {
      idempotencyKey: key,
    });
    expect(intent.status).toBe("succeeded");
    const secret = stripeFor(simulator, keys.secret_key);
    expect(await secret.paymentIntents.retrieve(intent.id)).toMatchObject({ id: intent.id });
    // One account, so one Idempotency-Key namespace, as at Stripe.
    const replay = await secret.paymentIntents.create(charge("pm_card_visa"), {
      idempotencyKey: key,
    });
    expect(replay.id).toBe(intent.id);
    expect(replay.lastResponse.headers["idempotent-replayed"]).toBe("true");
    expect(
      new Set(
        (await ledgerFor(simulator, { idempotencyKey: key })).payment_intents.map(
          (row) => row.account,
        ),
      ).size,
    ).toBe(1);

    const other = await newApiKeys(simulator);
    expect(other.secret_key).not.toBe(keys.secret_key);
  });

  it("accepts the keys it was started with, and so does every simulator on the same database", async () => {
    const configured = [
      `sk_test_configured_${randomBase62(24)}`,
      `rk_test_configured_${randomBase62(24)}`,
    ];
    const second = await startPaymentSimulator({
      databaseUrl: inject("databaseUrl"),
      poolMax: 1,
      apiKeys: configured,
      adminKey: newAdminKey(),
    });
    try {
      for (const apiKey of configured) {
        const intent = await stripeFor(second, apiKey).paymentIntents.create(
          charge("pm_card_visa"),
        );
        expect(await stripeFor(simulator, apiKey).paymentIntents.retrieve(intent.id)).toMatchObject(
          { id: intent.id, status: "succeeded" },
        );
      }
      // Each configured key is its own account.
      const found = await stripeFor(second, configured[1]!).paymentIntents.search({
        query: "status:'succeeded'",
      });
      expect(found.data).toHaveLength(1);
    } finally {
      await second.close();
    }
    await expect(
      startPaymentSimulator({
        databaseUrl: inject("databaseUrl"),
        apiKeys: ["sk_live_oops"],
        adminKey: newAdminKey(),
      }),
    ).rejects.toThrow(/test-mode API key/);
  });

  it("accepts the key as Basic auth, the way curl -u sends it", async () => {
    const basic = Buffer.from(`${await newSecretKey(simulator)}:`).toString("base64");
    const answer = await postIntent(simulator, {
      body: "amount=1900&currency=usd",
      headers: { Authorization: `Basic ${basic}` },
    });
    expect(answer.status).toBe(200);
  });

  it("scopes objects and idempotency keys to one API key", async () => {
    const alice = stripeFor(simulator, await newSecretKey(simulator));
    const bob = stripeFor(simulator, await newSecretKey(simulator));
    const key = randomUUID();
    // The same key with different parameters would be a 400 within one
    // account; across two accounts they are unrelated requests.
    const first = await alice.paymentIntents.create(charge("pm_card_visa"), {
      idempotencyKey: key,
    });
    const second = await bob.paymentIntents.create(
      { ...charge("pm_card_visa"), amount: 2500 },
      { idempotencyKey: key },
    );

    expect(second.id).not.toBe(first.id);
    expect(second.lastResponse.headers["idempotent-replayed"]).toBeUndefined();
    const ledger = await ledgerFor(simulator, { idempotencyKey: key });
    expect(ledger.charges).toHaveLength(2);
    expect(new Set(ledger.payment_intents.map((row) => row.account)).size).toBe(2);

    const error = await bob.paymentIntents.retrieve(first.id).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ statusCode: 404, code: "resource_missing" });
  });
});

describe("the admin ledger", () => {
  it("lists every intent and charge under keys with a given prefix, and nothing else", async () => {
    const stripe = stripeFor(simulator, await newSecretKey(simulator));
    const prefix = `merchant:${randomUUID()}:`;
    await stripe.paymentIntents.create(charge("pm_card_visa"), { idempotencyKey: `${prefix}1` });
    await stripe.paymentIntents.create(charge("pm_card_visa"), { idempotencyKey: `${prefix}2` });
    await stripe.paymentIntents.create(charge("pm_card_visa"), {
      idempotencyKey: `other:${prefix}3`,
    });

    const ledger = await ledgerFor(simulator, { idempotencyKeyPrefix: prefix });
    expect(ledger.payment_intents.map((intent) => intent.idempotency_key).sort()).toEqual([
      `${prefix}1`,
      `${prefix}2`,
    ]);
    expect(ledger.charges).toHaveLength(2);
    expect(
      ledger.charges.every((c) =>
        ledger.payment_intents.some((intent) => intent.id === c.payment_intent),
      ),
    ).toBe(true);
  });
});
