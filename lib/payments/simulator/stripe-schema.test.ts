import { randomUUID } from "node:crypto";
import { setTimeout as delay } from "node:timers/promises";
import Stripe from "stripe";
import { describe, expect, it } from "vitest";
import {
  newSecretKey,
  setFaults,
  stripeFor,
  withTestSimulator,
} from "@/lib/testing/payment-simulator";
import { sendRaw } from "@/lib/testing/raw-http";
import { stripeAnswerErrors, stripeSpecVersion } from "@/lib/testing/stripe-openapi";
import {
  CHARGE_FIELDS,
  missingFields,
  PAYMENT_INTENT_FIELDS,
  PAYMENT_METHOD_CARD_FIELDS,
  PAYMENT_METHOD_FIELDS,
} from "@/lib/testing/stripe-sdk-fields";

/**
 * Every answer the simulator sends, judged by Stripe's own OpenAPI spec:
 * the body validates against the schema of its operation and status
 * (stripe-openapi.ts), and each object carries every field the SDK's types
 * declare always present (stripe-sdk-fields.ts). The SDK drives the
 * simulator over real HTTP through a fetch that keeps each raw answer; raw
 * requests cover what the SDK would not send.
 */
const simulator = withTestSimulator();

interface Answer {
  method: string;
  path: string;
  status: number;
  headers: Headers;
  body: unknown;
}

/** The SDK on a new account, with every raw answer it received, in order. */
async function recordingStripe(
  secretKey?: string,
): Promise<{ stripe: Stripe; answers: Answer[]; secretKey: string }> {
  const key = secretKey ?? (await newSecretKey(simulator));
  const answers: Answer[] = [];
  const recordingFetch: typeof fetch = async (input, init) => {
    const response = await fetch(input, init);
    const url = new URL(input instanceof Request ? input.url : input);
    answers.push({
      method: init?.method ?? "GET",
      path: url.pathname,
      status: response.status,
      headers: response.headers,
      body: await response.clone().json(),
    });
    return response;
  };
  return {
    stripe: stripeFor(simulator, key, { fetch: recordingFetch, maxNetworkRetries: 0 }),
    answers,
    secretKey: key,
  };
}

/** One request as given, no SDK in between. */
async function rawAnswer(
  method: string,
  pathAndQuery: string,
  init: { secretKey?: string; body?: string; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const headers: Record<string, string> = { ...init.headers };
  if (init.secretKey) headers.Authorization = `Bearer ${init.secretKey}`;
  if (init.body !== undefined) headers["Content-Type"] = "application/x-www-form-urlencoded";
  const response = await fetch(`${simulator.url}${pathAndQuery}`, {
    method,
    headers,
    body: init.body,
  });
  return {
    method,
    path: new URL(pathAndQuery, simulator.url).pathname,
    status: response.status,
    headers: response.headers,
    body: await response.json(),
  };
}

function lastOf(answers: Answer[]): Answer {
  expect(answers.length).toBeGreaterThan(0);
  return answers.at(-1)!;
}

/** The answer validates against Stripe's schema for its operation and status. */
function expectStripeSchema(answer: Answer): void {
  expect(
    stripeAnswerErrors(answer.method, answer.path, answer.status, answer.body),
    `${answer.method} ${answer.path} ${answer.status} against Stripe's spec ${stripeSpecVersion()}`,
  ).toEqual([]);
}

function expectPaymentIntentFields(intent: unknown): void {
  expect(missingFields(intent, PAYMENT_INTENT_FIELDS), "PaymentIntent fields").toEqual([]);
}

// The SDK's always-present fields of a Refund, kept here, as the other lists
// are in lib/testing/stripe-sdk-fields.ts and the same way: `satisfies`
// fails the type check if one is missing or one is not in the type.
type AlwaysPresent<T> = { [K in keyof T]-?: object extends Pick<T, K> ? never : K }[keyof T];
const REFUND_FIELDS = {
  id: true,
  object: true,
  amount: true,
  balance_transaction: true,
  charge: true,
  created: true,
  currency: true,
  customer: true,
  customer_account: true,
  metadata: true,
  payment_intent: true,
  payment_method: true,
  reason: true,
  receipt_number: true,
  source_transfer_reversal: true,
  status: true,
  transfer_reversal: true,
} as const satisfies Record<AlwaysPresent<Stripe.Refund>, true>;

function expectRefundFields(refund: unknown): void {
  expect(missingFields(refund, REFUND_FIELDS), "Refund fields").toEqual([]);
}

function expectChargeFields(charge: unknown): void {
  expect(missingFields(charge, CHARGE_FIELDS), "Charge fields").toEqual([]);
}

function expectPaymentMethodFields(paymentMethod: unknown): void {
  expect(missingFields(paymentMethod, PAYMENT_METHOD_FIELDS), "PaymentMethod fields").toEqual([]);
  const card = (paymentMethod as { card?: unknown }).card;
  expect(missingFields(card, PAYMENT_METHOD_CARD_FIELDS), "PaymentMethod card fields").toEqual([]);
}

interface ErrorBody {
  error: {
    type: string;
    code?: string;
    param?: string;
    decline_code?: string;
    payment_intent?: { last_payment_error?: { payment_method?: unknown } };
    payment_method?: unknown;
  };
}

const errorOf = (answer: Answer) => (answer.body as ErrorBody).error;

const charge = (paymentMethod: string) => ({
  amount: 1900,
  currency: "usd",
  payment_method: paymentMethod,
  confirm: true,
});

async function declined(stripe: Stripe, paymentMethod: string): Promise<void> {
  await expect(stripe.paymentIntents.create(charge(paymentMethod))).rejects.toBeInstanceOf(
    Stripe.errors.StripeCardError,
  );
}

describe("the schema check itself", () => {
  const intent = {
    id: "pi_1",
    object: "payment_intent",
    amount: 1900,
    capture_method: "automatic",
    confirmation_method: "automatic",
    created: 1_700_000_000,
    currency: "usd",
    livemode: false,
    payment_method_types: ["card"],
    status: "succeeded",
    description: null,
  };

  it("accepts a PaymentIntent with Stripe's required fields, null where the spec says nullable", () => {
    expect(stripeAnswerErrors("GET", "/v1/payment_intents/pi_1", 200, intent)).toEqual([]);
  });

  it("refuses a PaymentIntent without a required field", () => {
    const withoutStatus: Partial<typeof intent> = { ...intent };
    delete withoutStatus.status;
    expect(stripeAnswerErrors("GET", "/v1/payment_intents/pi_1", 200, withoutStatus)).toContain(
      "/ must have required property 'status'",
    );
  });

  it("refuses null where the spec does not say nullable, and a wrong enum value", () => {
    const errors = stripeAnswerErrors("GET", "/v1/payment_intents/pi_1", 200, {
      ...intent,
      amount: null,
      status: "charged",
    });
    expect(errors).toContain("/amount must be integer");
    expect(errors.some((error) => error.startsWith("/status must be equal to one of"))).toBe(true);
  });

  it("judges an error answer by the operation's default (error) schema", () => {
    expect(
      stripeAnswerErrors("GET", "/v1/charges/ch_1", 404, { error: { message: "no type" } }),
    ).toContain("/error must have required property 'type'");
  });
});

describe("POST /v1/payment_intents answers as Stripe's schema says", () => {
  it("create and confirm: a succeeded PaymentIntent", async () => {
    const { stripe, answers } = await recordingStripe();
    await stripe.paymentIntents.create({ ...charge("pm_card_visa"), metadata: { order: "1" } });
    const answer = lastOf(answers);
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ object: "payment_intent", status: "succeeded" });
    expectStripeSchema(answer);
    expectPaymentIntentFields(answer.body);
  });

  it("create without confirm: a PaymentIntent waiting for confirmation", async () => {
    const { stripe, answers } = await recordingStripe();
    await stripe.paymentIntents.create({
      amount: 1900,
      currency: "usd",
      payment_method: "pm_card_visa",
      automatic_payment_methods: { enabled: true, allow_redirects: "never" },
    });
    const answer = lastOf(answers);
    expect(answer.body).toMatchObject({
      status: "requires_confirmation",
      automatic_payment_methods: { enabled: true, allow_redirects: "never" },
    });
    expectStripeSchema(answer);
    expectPaymentIntentFields(answer.body);
  });

  it.each([
    ["pm_card_chargeDeclined", "card_declined", "generic_decline"],
    ["pm_card_visa_chargeDeclinedInsufficientFunds", "card_declined", "insufficient_funds"],
    ["pm_card_chargeDeclinedExpiredCard", "expired_card", "expired_card"],
    ["pm_card_chargeDeclinedProcessingError", "processing_error", undefined],
  ])(
    "a decline (%s): 402 card_error carrying the intent and the whole payment method",
    async (paymentMethod, code, declineCode) => {
      const { stripe, answers } = await recordingStripe();
      await declined(stripe, paymentMethod);
      const answer = lastOf(answers);
      expect(answer.status).toBe(402);
      const error = errorOf(answer);
      expect(error).toMatchObject({ type: "card_error", code });
      expect(error.decline_code).toBe(declineCode);
      expectStripeSchema(answer);
      expectPaymentIntentFields(error.payment_intent);
      expectPaymentMethodFields(error.payment_method);
      expectPaymentMethodFields(error.payment_intent?.last_payment_error?.payment_method);
    },
  );

  it("a card that asks for 3-D Secure: requires_action with next_action, then succeeded or failed once settled", async () => {
    const { stripe, answers } = await recordingStripe();
    for (const authentication of ["complete", "fail"]) {
      const intent = await stripe.paymentIntents.create({
        ...charge("pm_card_authenticationRequired"),
        return_url: "https://shop.example/return",
      });
      const created = lastOf(answers);
      expect(created.body).toMatchObject({
        status: "requires_action",
        next_action: { type: "redirect_to_url" },
      });
      expectStripeSchema(created);
      expectPaymentIntentFields(created.body);

      await fetch(`${simulator.url}/authenticate/${intent.id}`, {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ client_secret: intent.client_secret!, authentication }),
        redirect: "manual",
      });
      await stripe.paymentIntents.retrieve(intent.id, { expand: ["latest_charge"] });
      const settled = lastOf(answers);
      expect(settled.body).toMatchObject({
        status: authentication === "complete" ? "succeeded" : "requires_payment_method",
        next_action: null,
      });
      expectStripeSchema(settled);
      expectPaymentIntentFields(settled.body);
    }
  });

  it("a webhook endpoint: Stripe's webhook_endpoint, with its secret", async () => {
    const { stripe, answers } = await recordingStripe();
    await stripe.webhookEndpoints.create({
      url: "https://shop.example/api/webhooks/stripe",
      enabled_events: ["payment_intent.succeeded", "charge.refunded"],
    });
    const answer = lastOf(answers);
    expect(answer.body).toMatchObject({ object: "webhook_endpoint", secret: expect.any(String) });
    expectStripeSchema(answer);
  });

  it("an idempotent replay: the stored answer again, Idempotent-Replayed", async () => {
    const { stripe, answers } = await recordingStripe();
    const idempotencyKey = randomUUID();
    await stripe.paymentIntents.create(charge("pm_card_visa"), { idempotencyKey });
    await stripe.paymentIntents.create(charge("pm_card_visa"), { idempotencyKey });
    const [first, replay] = answers;
    expect(replay!.headers.get("idempotent-replayed")).toBe("true");
    expect(replay!.body).toEqual(first!.body);
    expectStripeSchema(replay!);
    expectPaymentIntentFields(replay!.body);
  });

  it("the same key with other parameters: 400 idempotency_error", async () => {
    const { stripe, answers } = await recordingStripe();
    const idempotencyKey = randomUUID();
    await stripe.paymentIntents.create(charge("pm_card_visa"), { idempotencyKey });
    await expect(
      stripe.paymentIntents.create({ ...charge("pm_card_visa"), amount: 2500 }, { idempotencyKey }),
    ).rejects.toBeInstanceOf(Stripe.errors.StripeIdempotencyError);
    const answer = lastOf(answers);
    expect(answer.status).toBe(400);
    expect(errorOf(answer).type).toBe("idempotency_error");
    expectStripeSchema(answer);
  });

  it("the same key while its first request runs: 409 idempotency_key_in_use", async () => {
    const secretKey = await newSecretKey(simulator);
    const idempotencyKey = randomUUID();
    const body = "amount=1900&currency=usd&payment_method=pm_card_visa&confirm=true";
    // Each request waits this long holding the key, so the two overlap
    // whichever claims it first.
    await setFaults(simulator, { latencyMs: 1500 });
    const send = () =>
      rawAnswer("POST", "/v1/payment_intents", {
        secretKey,
        body,
        headers: { "Idempotency-Key": idempotencyKey },
      });
    const first = send();
    await delay(300);
    const answers = [await send(), await first];
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 409]);
    const inUse = answers.find((answer) => answer.status === 409)!;
    expect(errorOf(inUse)).toMatchObject({
      type: "idempotency_error",
      code: "idempotency_key_in_use",
    });
    expectStripeSchema(inUse);
  });

  it("a parameter it does not know: 400 parameter_unknown naming it", async () => {
    const answer = await rawAnswer("POST", "/v1/payment_intents", {
      secretKey: await newSecretKey(simulator),
      body: "amount=1900&currency=usd&capture_method=manual",
    });
    expect(answer.status).toBe(400);
    expect(errorOf(answer)).toMatchObject({
      type: "invalid_request_error",
      code: "parameter_unknown",
      param: "capture_method",
    });
    expectStripeSchema(answer);
  });

  it("an invalid value: 400 with the parameter named", async () => {
    const answer = await rawAnswer("POST", "/v1/payment_intents", {
      secretKey: await newSecretKey(simulator),
      body: "amount=12&currency=usd",
    });
    expect(answer.status).toBe(400);
    expect(errorOf(answer)).toMatchObject({ code: "amount_too_small", param: "amount" });
    expectStripeSchema(answer);
  });
});

describe("GET /v1/payment_intents/:id answers as Stripe's schema says", () => {
  it("retrieve: the PaymentIntent, latest_charge as an id", async () => {
    const { stripe, answers } = await recordingStripe();
    const created = await stripe.paymentIntents.create(charge("pm_card_visa"));
    await stripe.paymentIntents.retrieve(created.id);
    const answer = lastOf(answers);
    expect(answer.body).toMatchObject({ id: created.id, latest_charge: created.latest_charge });
    expectStripeSchema(answer);
    expectPaymentIntentFields(answer.body);
  });

  it("retrieve with expand[]: the charge and the payment method in place of their ids", async () => {
    const { stripe, answers } = await recordingStripe();
    const created = await stripe.paymentIntents.create(charge("pm_card_visa"));
    await stripe.paymentIntents.retrieve(created.id, {
      expand: ["latest_charge", "payment_method", "customer"],
    });
    const answer = lastOf(answers);
    const { latest_charge: latestCharge, payment_method: paymentMethod } = answer.body as {
      latest_charge: unknown;
      payment_method: unknown;
    };
    expect(latestCharge).toMatchObject({
      object: "charge",
      id: created.latest_charge,
      payment_intent: created.id,
      status: "succeeded",
    });
    expect(paymentMethod).toMatchObject({ object: "payment_method", id: "pm_card_visa" });
    expect(answer.body).toMatchObject({ customer: null });
    expectStripeSchema(answer);
    expectChargeFields(latestCharge);
    expectPaymentMethodFields(paymentMethod);
  });

  it("retrieve one that does not exist: 404 resource_missing, param intent", async () => {
    const { stripe, answers } = await recordingStripe();
    await expect(stripe.paymentIntents.retrieve("pi_missing")).rejects.toBeInstanceOf(
      Stripe.errors.StripeInvalidRequestError,
    );
    const answer = lastOf(answers);
    expect(answer.status).toBe(404);
    expect(errorOf(answer)).toMatchObject({ code: "resource_missing", param: "intent" });
    expectStripeSchema(answer);
  });

  it("retrieve with a parameter it does not know: 400 parameter_unknown", async () => {
    const { stripe } = await recordingStripe();
    const created = await stripe.paymentIntents.create(charge("pm_card_visa"));
    const answer = await rawAnswer("GET", `/v1/payment_intents/${created.id}?shipping=1`, {
      secretKey: await newSecretKey(simulator),
    });
    expect(answer.status).toBe(400);
    expect(errorOf(answer)).toMatchObject({ code: "parameter_unknown", param: "shipping" });
    expectStripeSchema(answer);
  });

  it("retrieve expanding what it does not implement: 400 parameter_unknown, param expand", async () => {
    const { stripe, answers } = await recordingStripe();
    const created = await stripe.paymentIntents.create(charge("pm_card_visa"));
    await expect(
      stripe.paymentIntents.retrieve(created.id, { expand: ["latest_charge.balance_transaction"] }),
    ).rejects.toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    const answer = lastOf(answers);
    expect(answer.status).toBe(400);
    expect(errorOf(answer)).toMatchObject({
      type: "invalid_request_error",
      code: "parameter_unknown",
      param: "expand",
    });
    expectStripeSchema(answer);
  });
});

describe("GET /v1/payment_intents/search answers as Stripe's schema says", () => {
  it("search by metadata: a search_result of PaymentIntents", async () => {
    const { stripe, answers } = await recordingStripe();
    const order = randomUUID();
    await stripe.paymentIntents.create({ ...charge("pm_card_visa"), metadata: { order } });
    await stripe.paymentIntents.search({ query: `metadata['order']:'${order}'` });
    const answer = lastOf(answers);
    expect(answer.body).toMatchObject({ object: "search_result", data: [{ metadata: { order } }] });
    expectStripeSchema(answer);
    expectPaymentIntentFields((answer.body as { data: unknown[] }).data[0]);
  });
});

describe("GET /v1/charges and /v1/charges/:id answer as Stripe's schema says", () => {
  it("list a PaymentIntent's charges, a failed one included", async () => {
    const { stripe, answers } = await recordingStripe();
    await declined(stripe, "pm_card_chargeDeclinedInsufficientFunds");
    await stripe.paymentIntents.create(charge("pm_card_visa"));
    await stripe.charges.list({ limit: 5 });
    const answer = lastOf(answers);
    const data = (answer.body as { data: { status: string }[] }).data;
    expect(data.map((listed) => listed.status).sort()).toEqual(["failed", "succeeded"]);
    expectStripeSchema(answer);
    for (const listed of data) expectChargeFields(listed);
  });

  it("retrieve one charge", async () => {
    const { stripe, answers } = await recordingStripe();
    const intent = await stripe.paymentIntents.create(charge("pm_card_mastercard"));
    await stripe.charges.retrieve(intent.latest_charge as string);
    const answer = lastOf(answers);
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      object: "charge",
      id: intent.latest_charge,
      payment_intent: intent.id,
      payment_method_details: { type: "card", card: { brand: "mastercard", last4: "4444" } },
    });
    expectStripeSchema(answer);
    expectChargeFields(answer.body);
  });

  it("retrieve a charge that does not exist: 404 resource_missing, param charge", async () => {
    const { stripe, answers } = await recordingStripe();
    await expect(stripe.charges.retrieve("ch_missing")).rejects.toBeInstanceOf(
      Stripe.errors.StripeInvalidRequestError,
    );
    const answer = lastOf(answers);
    expect(answer.status).toBe(404);
    expect(errorOf(answer)).toMatchObject({ code: "resource_missing", param: "charge" });
    expectStripeSchema(answer);
  });

  it("a list cursor it does not implement: 400 parameter_unknown naming it", async () => {
    const { stripe, answers } = await recordingStripe();
    await expect(stripe.charges.list({ starting_after: "ch_1" })).rejects.toBeInstanceOf(
      Stripe.errors.StripeInvalidRequestError,
    );
    const answer = lastOf(answers);
    expect(answer.status).toBe(400);
    expect(errorOf(answer)).toMatchObject({ code: "parameter_unknown", param: "starting_after" });
    expectStripeSchema(answer);
  });
});

describe("POST /v1/refunds, GET /v1/refunds and /v1/refunds/:id answer as Stripe's schema says", () => {
  async function refundable(): Promise<{
    stripe: Stripe;
    answers: Answer[];
    intent: Stripe.PaymentIntent;
  }> {
    const { stripe, answers } = await recordingStripe();
    const intent = await stripe.paymentIntents.create(charge("pm_card_visa"));
    return { stripe, answers, intent };
  }

  it("a partial refund, then the rest: each a Refund; the charge then shows both", async () => {
    const { stripe, answers, intent } = await refundable();
    await stripe.refunds.create({
      payment_intent: intent.id,
      amount: 500,
      reason: "duplicate",
      metadata: { order: "1" },
    });
    const partial = lastOf(answers);
    expect(partial.body).toMatchObject({ object: "refund", amount: 500, status: "succeeded" });
    expectStripeSchema(partial);
    expectRefundFields(partial.body);

    await stripe.refunds.create({ payment_intent: intent.id });
    const rest = lastOf(answers);
    expect(rest.body).toMatchObject({ object: "refund", amount: 1400, reason: null });
    expectStripeSchema(rest);
    expectRefundFields(rest.body);

    await stripe.charges.retrieve(intent.latest_charge as string);
    const refunded = lastOf(answers);
    expect(refunded.body).toMatchObject({ amount_refunded: 1900, refunded: true });
    expectStripeSchema(refunded);
    expectChargeFields(refunded.body);
  });

  it("an idempotent replay of a refund: the stored answer again", async () => {
    const { stripe, answers, intent } = await refundable();
    const idempotencyKey = randomUUID();
    await stripe.refunds.create({ payment_intent: intent.id }, { idempotencyKey });
    await stripe.refunds.create({ payment_intent: intent.id }, { idempotencyKey });
    const [first, replay] = answers.slice(-2);
    expect(replay!.headers.get("idempotent-replayed")).toBe("true");
    expect(replay!.body).toEqual(first!.body);
    expectStripeSchema(replay!);
  });

  it("list and retrieve: Stripe's list object of Refunds, and one Refund", async () => {
    const { stripe, answers, intent } = await refundable();
    const refund = await stripe.refunds.create({ payment_intent: intent.id, amount: 100 });
    await stripe.refunds.create({ payment_intent: intent.id, amount: 200 });
    await stripe.refunds.list({ payment_intent: intent.id, limit: 1 });
    const list = lastOf(answers);
    expect(list.body).toMatchObject({ object: "list", url: "/v1/refunds", has_more: true });
    expectStripeSchema(list);
    for (const listed of (list.body as { data: unknown[] }).data) expectRefundFields(listed);

    await stripe.refunds.retrieve(refund.id);
    const read = lastOf(answers);
    expect(read.body).toMatchObject({ id: refund.id, object: "refund" });
    expectStripeSchema(read);
    expectRefundFields(read.body);
  });

  it.each([
    ["more than is left: amount_too_large", { amount: 2500 }, "amount_too_large"],
    ["nothing left: charge_already_refunded", { refundFirst: true }, "charge_already_refunded"],
  ] as const)("a refusal, %s", async (_, how, code) => {
    const { stripe, answers, intent } = await refundable();
    if ("refundFirst" in how) await stripe.refunds.create({ payment_intent: intent.id });
    await expect(
      stripe.refunds.create({
        payment_intent: intent.id,
        ...("amount" in how && { amount: how.amount }),
      }),
    ).rejects.toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    const answer = lastOf(answers);
    expect(answer.status).toBe(400);
    expect(errorOf(answer)).toMatchObject({ type: "invalid_request_error", code });
    expectStripeSchema(answer);
  });

  it("a PaymentIntent that did not succeed, or that does not exist: 400 invalid_request_error", async () => {
    const { stripe, answers } = await recordingStripe();
    await declined(stripe, "pm_card_chargeDeclined");
    const intent = (answers.at(-1)!.body as ErrorBody).error.payment_intent as { id: string };
    for (const id of [intent.id, "pi_doesnotexist"]) {
      await expect(stripe.refunds.create({ payment_intent: id })).rejects.toBeInstanceOf(
        Stripe.errors.StripeInvalidRequestError,
      );
      const answer = lastOf(answers);
      expect(answer.status).toBe(400);
      expect(errorOf(answer).type).toBe("invalid_request_error");
      expectStripeSchema(answer);
    }
  });

  it("retrieve a refund that does not exist: 404 resource_missing, param refund", async () => {
    const { stripe, answers } = await recordingStripe();
    await expect(stripe.refunds.retrieve("re_missing")).rejects.toBeInstanceOf(
      Stripe.errors.StripeInvalidRequestError,
    );
    const answer = lastOf(answers);
    expect(answer.status).toBe(404);
    expect(errorOf(answer)).toMatchObject({ code: "resource_missing", param: "refund" });
    expectStripeSchema(answer);
  });

  it("no PaymentIntent or charge named: 400 parameter_missing", async () => {
    const answer = await rawAnswer("POST", "/v1/refunds", {
      secretKey: await newSecretKey(simulator),
      body: "amount=100",
    });
    expect(answer.status).toBe(400);
    expect(errorOf(answer)).toMatchObject({ code: "parameter_missing", param: "payment_intent" });
    expectStripeSchema(answer);
  });
});

describe("refusals before any endpoint answer as Stripe's schema says", () => {
  it("an API key it does not know: 401", async () => {
    const { stripe, answers } = await recordingStripe("sk_test_notARegisteredKey123");
    await expect(stripe.paymentIntents.create(charge("pm_card_visa"))).rejects.toBeInstanceOf(
      Stripe.errors.StripeAuthenticationError,
    );
    const answer = lastOf(answers);
    expect(answer.status).toBe(401);
    expectStripeSchema(answer);
  });

  it("no API key: 401", async () => {
    const answer = await rawAnswer("GET", "/v1/charges");
    expect(answer.status).toBe(401);
    expectStripeSchema(answer);
  });

  it("an endpoint it does not serve: 404 invalid_request_error", async () => {
    const answer = await rawAnswer("POST", "/v1/customers", {
      secretKey: await newSecretKey(simulator),
      body: "email=shopper%40example.com",
    });
    expect(answer.status).toBe(404);
    expect(errorOf(answer).type).toBe("invalid_request_error");
    expectStripeSchema(answer);
  });

  it("an object id whose escapes are not UTF-8: 404 invalid_request_error, not a 500", async () => {
    const secretKey = await newSecretKey(simulator);
    for (const path of [
      "/v1/payment_intents/pi_%E0%A4",
      "/v1/charges/ch_%FF",
      "/v1/refunds/re_%FF",
    ]) {
      const answer = await rawAnswer("GET", path, { secretKey });
      expect(answer.status, path).toBe(404);
      expect(errorOf(answer).type).toBe("invalid_request_error");
      expectStripeSchema(answer);
    }
  });

  it("a Host that names another site: 421", async () => {
    const raw = await sendRaw(simulator.url, {
      method: "GET",
      path: "/v1/charges",
      headers: { host: `evil.example:${simulator.port}` },
    });
    const answer: Answer = {
      method: "GET",
      path: "/v1/charges",
      status: raw.status,
      headers: new Headers(),
      body: JSON.parse(raw.body),
    };
    expect(answer.status).toBe(421);
    expectStripeSchema(answer);
  });

  it("a body over the size limit: 413 invalid_request_error", async () => {
    const answer = await rawAnswer("POST", "/v1/payment_intents", {
      secretKey: await newSecretKey(simulator),
      body: `amount=1900&currency=usd&description=${"x".repeat(70_000)}`,
    });
    expect(answer.status).toBe(413);
    expect(errorOf(answer).type).toBe("invalid_request_error");
    expectStripeSchema(answer);
  });

  it("an injected server failure: 500 api_error", async () => {
    const { stripe, answers } = await recordingStripe();
    await setFaults(simulator, { failNext: "http_500" });
    await expect(stripe.paymentIntents.create(charge("pm_card_visa"))).rejects.toBeInstanceOf(
      Stripe.errors.StripeAPIError,
    );
    const answer = lastOf(answers);
    expect(answer.status).toBe(500);
    expect(errorOf(answer).type).toBe("api_error");
    expectStripeSchema(answer);
  });
});
