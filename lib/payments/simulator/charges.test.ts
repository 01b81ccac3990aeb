import { randomUUID } from "node:crypto";
import Stripe from "stripe";
import { describe, expect, it } from "vitest";
import {
  ledgerFor,
  newSecretKey,
  stripeFor,
  withTestSimulator,
} from "@/lib/testing/payment-simulator";

/**
 * GET /v1/charges through the SDK: every attempt to move money for a
 * PaymentIntent, succeeded or failed, as Stripe lists it, and only the
 * caller's own.
 */
const simulator = withTestSimulator();

const charge = (paymentMethod: string) => ({
  amount: 1900,
  currency: "usd",
  payment_method: paymentMethod,
  confirm: true,
  automatic_payment_methods: { enabled: true, allow_redirects: "never" as const },
});

async function declinedIntent(
  stripe: Stripe,
  paymentMethod: string,
): Promise<Stripe.PaymentIntent> {
  const error = await stripe.paymentIntents.create(charge(paymentMethod)).then(
    () => expect.unreachable("the charge should have been declined"),
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(Stripe.errors.StripeCardError);
  return (error as Stripe.errors.StripeCardError).payment_intent!;
}

async function getCharges(
  secretKey: string,
  query: string,
): Promise<{ status: number; json: { error?: Record<string, unknown> } }> {
  const response = await fetch(`${simulator.url}/v1/charges?${query}`, {
    headers: { Authorization: `Bearer ${secretKey}` },
  });
  return {
    status: response.status,
    json: (await response.json()) as { error?: Record<string, unknown> },
  };
}

describe("GET /v1/charges?payment_intent=", () => {
  it("lists the one succeeded charge of a succeeded PaymentIntent, as Stripe's list object", async () => {
    const stripe = stripeFor(simulator, await newSecretKey(simulator));
    const key = randomUUID();
    const intent = await stripe.paymentIntents.create(charge("pm_card_visa"), {
      idempotencyKey: key,
    });

    const list = await stripe.charges.list({ payment_intent: intent.id });
    expect(list).toMatchObject({ object: "list", url: "/v1/charges", has_more: false });
    expect(list.data).toHaveLength(1);
    expect(list.data[0]).toMatchObject({
      id: intent.latest_charge,
      object: "charge",
      payment_intent: intent.id,
      status: "succeeded",
      paid: true,
      amount: 1900,
      currency: "usd",
      failure_code: null,
      livemode: false,
    });
    // The same object the ledger shows (chargeObject), less the admin's `account`.
    const fromLedger = {
      ...(await ledgerFor(simulator, { idempotencyKey: key })).charges[0],
    } as Record<string, unknown>;
    delete fromLedger.account;
    expect(list.data[0]).toEqual(fromLedger);
  });

  it("lists the one failed charge of a declined PaymentIntent, with its failure code", async () => {
    const stripe = stripeFor(simulator, await newSecretKey(simulator));
    const intent = await declinedIntent(stripe, "pm_card_chargeDeclinedInsufficientFunds");
    expect(intent.status).toBe("requires_payment_method");

    const list = await stripe.charges.list({ payment_intent: intent.id, limit: 100 });
    expect(list.has_more).toBe(false);
    expect(list.data).toEqual([
      expect.objectContaining({
        id: intent.latest_charge,
        payment_intent: intent.id,
        status: "failed",
        paid: false,
        failure_code: "card_declined",
        failure_message: "Your card has insufficient funds.",
        outcome: expect.objectContaining({ reason: "insufficient_funds" }),
      }),
    ]);
  });

  it("shows another account's PaymentIntent no charges", async () => {
    const alice = stripeFor(simulator, await newSecretKey(simulator));
    const bob = stripeFor(simulator, await newSecretKey(simulator));
    const intent = await alice.paymentIntents.create(charge("pm_card_visa"));
    expect((await alice.charges.list({ payment_intent: intent.id })).data).toHaveLength(1);
    expect(await bob.charges.list({ payment_intent: intent.id })).toMatchObject({
      object: "list",
      has_more: false,
      data: [],
    });
  });

  it("has none for a PaymentIntent created without confirm", async () => {
    const stripe = stripeFor(simulator, await newSecretKey(simulator));
    const intent = await stripe.paymentIntents.create({ amount: 1900, currency: "usd" });
    expect((await stripe.charges.list({ payment_intent: intent.id })).data).toEqual([]);
  });
});

describe("GET /v1/charges", () => {
  it("lists only the caller's charges, newest first, `limit` at a time (default 10) with has_more", async () => {
    const secretKey = await newSecretKey(simulator);
    const stripe = stripeFor(simulator, secretKey);
    await stripeFor(simulator, await newSecretKey(simulator)).paymentIntents.create(
      charge("pm_card_visa"),
    );
    const intents: Stripe.PaymentIntent[] = [];
    for (let index = 0; index < 11; index++)
      intents.push(await stripe.paymentIntents.create(charge("pm_card_visa")));

    const all = await stripe.charges.list();
    expect(all.data).toHaveLength(10);
    expect(all.has_more).toBe(true);
    const two = await stripe.charges.list({ limit: 2 });
    expect(two.has_more).toBe(true);
    const everything = await stripe.charges.list({ limit: 100 });
    expect(everything.has_more).toBe(false);
    expect(new Set(everything.data.map((listed) => listed.id))).toEqual(
      new Set(intents.map((intent) => intent.latest_charge)),
    );
    const created = everything.data.map((listed) => listed.created);
    expect(created).toEqual(created.toSorted((a, b) => b - a));
    expect(two.data.map((listed) => listed.id)).toEqual(
      everything.data.slice(0, 2).map((listed) => listed.id),
    );
  });

  it.each([
    ["a cursor it does not support", "starting_after=ch_1", "starting_after"],
    ["a filter it does not support", "customer=cus_1", "customer"],
    ["a nested parameter", "created[gte]=1", "created"],
  ])("answers 400 parameter_unknown to %s", async (_case, query, param) => {
    const answer = await getCharges(await newSecretKey(simulator), query);
    expect(answer.status).toBe(400);
    expect(answer.json.error).toMatchObject({
      type: "invalid_request_error",
      code: "parameter_unknown",
      param,
    });
  });

  it.each(["0", "101", "many"])(
    "answers 400 parameter_invalid_integer to limit=%s",
    async (limit) => {
      const answer = await getCharges(
        await newSecretKey(simulator),
        `payment_intent=pi_1&limit=${limit}`,
      );
      expect(answer.status).toBe(400);
      expect(answer.json.error).toMatchObject({
        type: "invalid_request_error",
        code: "parameter_invalid_integer",
        param: "limit",
      });
    },
  );

  it("answers 401 without a known API key", async () => {
    const answer = await getCharges(`sk_test_${"x".repeat(30)}`, "payment_intent=pi_1");
    expect(answer.status).toBe(401);
  });
});
