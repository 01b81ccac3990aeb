import { randomUUID } from "node:crypto";
import Stripe from "stripe";
import { describe, expect, it } from "vitest";
import {
  adminFetch,
  newSecretKey,
  setFaults,
  stripeFor,
  withTestSimulator,
} from "@/lib/testing/payment-simulator";
import { itOnServer } from "@/lib/testing/postgres-server-only";
import { sendOverlapping } from "@/lib/testing/raw-http";

/**
 * Stripe's refunds at the simulator, through the real SDK and raw HTTP:
 * full and partial refunds, Stripe's refusals, the Idempotency-Key and the
 * faults as a PaymentIntent has them, the charge's running total, the list
 * and its pages, and never more given back than a payment took, however
 * many refunds of it are in flight at once.
 */
const simulator = withTestSimulator();

async function newStripe(): Promise<{ stripe: Stripe; secretKey: string }> {
  const secretKey = await newSecretKey(simulator);
  return { stripe: stripeFor(simulator, secretKey, { maxNetworkRetries: 0 }), secretKey };
}

/** A succeeded PaymentIntent of `amount`, paid with pm_card_visa. */
function paid(stripe: Stripe, amount = 1900, currency = "usd"): Promise<Stripe.PaymentIntent> {
  return stripe.paymentIntents.create({
    amount,
    currency,
    payment_method: "pm_card_visa",
    confirm: true,
  });
}

async function stripeErrorOf(promise: Promise<unknown>): Promise<Stripe.errors.StripeError> {
  const error = await promise.then(
    () => expect.unreachable("the refund should have been refused"),
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(Stripe.errors.StripeError);
  return error as Stripe.errors.StripeError;
}

/** POST /v1/refunds with a raw form body, for what the SDK would not send. */
async function postRefund(
  secretKey: string,
  body: string,
  key?: string,
): Promise<{ status: number; headers: Headers; text: string; json: Record<string, unknown> }> {
  const headers: Record<string, string> = {
    Authorization: `Bearer ${secretKey}`,
    "Content-Type": "application/x-www-form-urlencoded",
  };
  if (key !== undefined) headers["Idempotency-Key"] = key;
  const response = await fetch(`${simulator.url}/v1/refunds`, { method: "POST", headers, body });
  const text = await response.text();
  return {
    status: response.status,
    headers: response.headers,
    text,
    json: JSON.parse(text) as Record<string, unknown>,
  };
}

interface LedgerRefund {
  id: string;
  amount: number;
  payment_intent: string;
  idempotency_key: string | null;
  account: string;
}

/** The admin ledger's refunds of one PaymentIntent, across accounts. */
async function ledgerRefunds(paymentIntent: string): Promise<LedgerRefund[]> {
  const response = await adminFetch(
    simulator,
    `/_simulator/ledger?payment_intent=${paymentIntent}`,
  );
  expect(response.status).toBe(200);
  return ((await response.json()) as { refunds: LedgerRefund[] }).refunds;
}

const sum = (amounts: number[]) => amounts.reduce((total, amount) => total + amount, 0);

describe("POST /v1/refunds", () => {
  it("refunds all that is left when no amount is given: a succeeded refund of the charge, the charge refunded", async () => {
    const { stripe } = await newStripe();
    const intent = await paid(stripe, 1900);
    const refund = await stripe.refunds.create({
      payment_intent: intent.id,
      reason: "requested_by_customer",
      metadata: { order: "42" },
    });

    expect(refund).toMatchObject({
      id: expect.stringMatching(/^re_[0-9A-Za-z]{24}$/),
      object: "refund",
      amount: 1900,
      currency: "usd",
      status: "succeeded",
      payment_intent: intent.id,
      charge: intent.latest_charge,
      payment_method: "pm_card_visa",
      reason: "requested_by_customer",
      metadata: { order: "42" },
      balance_transaction: null,
    });
    expect(refund.created).toBeGreaterThanOrEqual(intent.created);
    const charge = await stripe.charges.retrieve(intent.latest_charge as string);
    expect(charge).toMatchObject({ amount: 1900, amount_refunded: 1900, refunded: true });
    // A PaymentIntent keeps what it received: refunds show on its charge and in the refunds list.
    expect(await stripe.paymentIntents.retrieve(intent.id)).toMatchObject({
      status: "succeeded",
      amount_received: 1900,
    });
  });

  it("refunds in parts, each counted on the charge, which is refunded only once nothing is left", async () => {
    const { stripe } = await newStripe();
    const intent = await paid(stripe, 1900);
    const first = await stripe.refunds.create({ payment_intent: intent.id, amount: 500 });
    const second = await stripe.refunds.create({ payment_intent: intent.id, amount: 900 });
    expect([first.amount, second.amount]).toEqual([500, 900]);
    expect(await stripe.charges.retrieve(intent.latest_charge as string)).toMatchObject({
      amount_refunded: 1400,
      refunded: false,
    });

    const rest = await stripe.refunds.create({ payment_intent: intent.id });
    expect(rest.amount).toBe(500);
    expect(await stripe.charges.retrieve(intent.latest_charge as string)).toMatchObject({
      amount_refunded: 1900,
      refunded: true,
    });
    const listed = await stripe.charges.list({ payment_intent: intent.id });
    expect(listed.data.map((charge) => charge.amount_refunded)).toEqual([1900]);
  });

  it("refunds by charge as by PaymentIntent", async () => {
    const { stripe } = await newStripe();
    const intent = await paid(stripe, 1900);
    const refund = await stripe.refunds.create({
      charge: intent.latest_charge as string,
      amount: 300,
    });
    expect(refund).toMatchObject({ amount: 300, payment_intent: intent.id });
    const both = await stripe.refunds.create({
      charge: intent.latest_charge as string,
      payment_intent: intent.id,
      amount: 200,
    });
    expect(both.amount).toBe(200);
    expect((await stripe.charges.retrieve(intent.latest_charge as string)).amount_refunded).toBe(
      500,
    );
  });

  it("refuses more than the charge with Stripe's amount_too_large, naming the charge amount, and refunds nothing", async () => {
    const { stripe } = await newStripe();
    const intent = await paid(stripe, 1900);
    const error = await stripeErrorOf(
      stripe.refunds.create({ payment_intent: intent.id, amount: 2000 }),
    );
    expect(error).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    expect(error).toMatchObject({
      statusCode: 400,
      type: "StripeInvalidRequestError",
      code: "amount_too_large",
      param: "amount",
      message: "Refund amount ($20.00) is greater than charge amount ($19.00)",
    });
    expect(await stripe.refunds.list({ payment_intent: intent.id })).toMatchObject({ data: [] });
    expect((await stripe.charges.retrieve(intent.latest_charge as string)).amount_refunded).toBe(0);
  });

  it("refuses more than is left after a partial refund, naming what is left", async () => {
    const { stripe } = await newStripe();
    const intent = await paid(stripe, 1900);
    await stripe.refunds.create({ payment_intent: intent.id, amount: 1000 });
    const error = await stripeErrorOf(
      stripe.refunds.create({ payment_intent: intent.id, amount: 901 }),
    );
    expect(error).toMatchObject({
      statusCode: 400,
      code: "amount_too_large",
      message: "Refund amount ($9.01) is greater than unrefunded amount on charge ($9.00)",
    });
    // Exactly what is left is fine.
    expect((await stripe.refunds.create({ payment_intent: intent.id, amount: 900 })).amount).toBe(
      900,
    );
  });

  it("writes money in the charge's currency, zero-decimal ones included", async () => {
    const { stripe } = await newStripe();
    const euros = await paid(stripe, 1900, "eur");
    expect(
      await stripeErrorOf(stripe.refunds.create({ payment_intent: euros.id, amount: 2500 })),
    ).toMatchObject({ message: "Refund amount (€25.00) is greater than charge amount (€19.00)" });
    const yen = await paid(stripe, 1900, "jpy");
    expect(
      await stripeErrorOf(stripe.refunds.create({ payment_intent: yen.id, amount: 2500 })),
    ).toMatchObject({ message: "Refund amount (¥2,500) is greater than charge amount (¥1,900)" });
  });

  it("refuses a refund of a fully refunded charge with charge_already_refunded, whatever the amount", async () => {
    const { stripe } = await newStripe();
    const intent = await paid(stripe, 1900);
    await stripe.refunds.create({ payment_intent: intent.id });
    for (const amount of [1, undefined]) {
      const error = await stripeErrorOf(
        stripe.refunds.create({ payment_intent: intent.id, ...(amount && { amount }) }),
      );
      expect(error).toMatchObject({
        statusCode: 400,
        code: "charge_already_refunded",
        message: `Charge ${intent.latest_charge as string} has already been refunded.`,
      });
    }
    expect((await stripe.refunds.list({ payment_intent: intent.id })).data).toHaveLength(1);
  });

  it("refuses a PaymentIntent whose payment did not succeed: declined, or never confirmed", async () => {
    const { stripe } = await newStripe();
    const declined = (
      (await stripe.paymentIntents
        .create({
          amount: 1900,
          currency: "usd",
          payment_method: "pm_card_chargeDeclined",
          confirm: true,
        })
        .catch((caught: unknown) => caught)) as Stripe.errors.StripeCardError
    ).payment_intent!;
    const unconfirmed = await stripe.paymentIntents.create({ amount: 1900, currency: "usd" });
    for (const intent of [declined, unconfirmed]) {
      const error = await stripeErrorOf(stripe.refunds.create({ payment_intent: intent.id }));
      expect(error).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
      expect(error).toMatchObject({
        statusCode: 400,
        message: `This PaymentIntent (${intent.id}) does not have a successful charge to refund.`,
      });
    }
    // Named by its failed charge, the declined payment is refused the same way.
    expect(
      await stripeErrorOf(stripe.refunds.create({ charge: declined.latest_charge as string })),
    ).toMatchObject({ statusCode: 400, message: expect.stringContaining(declined.id) });
  });

  it("refuses an unknown PaymentIntent or charge, and another account's, as resource_missing", async () => {
    const { stripe } = await newStripe();
    const { stripe: other } = await newStripe();
    const theirs = await paid(other);
    for (const id of ["pi_doesnotexist", theirs.id]) {
      expect(await stripeErrorOf(stripe.refunds.create({ payment_intent: id }))).toMatchObject({
        statusCode: 400,
        code: "resource_missing",
        param: "payment_intent",
        message: `No such payment_intent: '${id}'`,
      });
    }
    expect(
      await stripeErrorOf(stripe.refunds.create({ charge: theirs.latest_charge as string })),
    ).toMatchObject({ statusCode: 400, code: "resource_missing", param: "charge" });
    // Nothing happened to their payment.
    expect((await other.charges.retrieve(theirs.latest_charge as string)).amount_refunded).toBe(0);
  });

  it("refuses a charge named with a PaymentIntent it does not belong to", async () => {
    const { stripe } = await newStripe();
    const [one, two] = [await paid(stripe), await paid(stripe)];
    expect(
      await stripeErrorOf(
        stripe.refunds.create({ payment_intent: one.id, charge: two.latest_charge as string }),
      ),
    ).toMatchObject({ statusCode: 400, param: "charge" });
  });

  it.each([
    ["", "payment_intent", "parameter_missing"],
    ["amount=100", "payment_intent", "parameter_missing"],
    ["payment_intent=", "payment_intent", "parameter_invalid_empty"],
    ["payment_intent=pi_1&amount=0", "amount", "parameter_invalid_integer"],
    ["payment_intent=pi_1&amount=12.5", "amount", "parameter_invalid_integer"],
    ["payment_intent=pi_1&reason=changed_my_mind", "reason", undefined],
    ["payment_intent=pi_1&currency=usd", "currency", "parameter_unknown"],
    ["payment_intent=pi_1&metadata=x", "metadata", undefined],
  ])("refuses %j: 400, param %s, code %s", async (body, param, code) => {
    const { secretKey } = await newStripe();
    const answer = await postRefund(secretKey, body);
    expect(answer.status).toBe(400);
    expect(answer.json.error).toMatchObject({ type: "invalid_request_error", param });
    expect((answer.json.error as { code?: string }).code).toBe(code);
  });
});

describe("POST /v1/refunds under an Idempotency-Key", () => {
  it("replays the stored refund byte for byte, Idempotent-Replayed, and refunds once", async () => {
    const { stripe, secretKey } = await newStripe();
    const intent = await paid(stripe, 1900);
    const key = randomUUID();
    const body = `payment_intent=${intent.id}&amount=700&metadata[order]=42`;
    const first = await postRefund(secretKey, body, key);
    const again = await postRefund(
      secretKey,
      `metadata[order]=42&amount=700&payment_intent=${intent.id}`,
      key,
    );

    expect(first.status).toBe(200);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    expect(again.status).toBe(200);
    expect(again.text).toBe(first.text);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.headers.get("original-request")).toBe(first.headers.get("request-id"));
    const refunds = await ledgerRefunds(intent.id);
    expect(refunds).toEqual([
      expect.objectContaining({ id: first.json.id, amount: 700, idempotency_key: key }),
    ]);
    expect((await stripe.charges.retrieve(intent.latest_charge as string)).amount_refunded).toBe(
      700,
    );
  });

  it("replays through the SDK: the same refund, whatever was refunded since", async () => {
    const { stripe } = await newStripe();
    const intent = await paid(stripe, 1900);
    const key = randomUUID();
    const first = await stripe.refunds.create(
      { payment_intent: intent.id },
      { idempotencyKey: key },
    );
    const again = await stripe.refunds.create(
      { payment_intent: intent.id },
      { idempotencyKey: key },
    );
    expect(again.id).toBe(first.id);
    expect(again.lastResponse.headers["idempotent-replayed"]).toBe("true");
    expect((await stripe.refunds.list({ payment_intent: intent.id })).data).toHaveLength(1);
  });

  it("stores a refusal of the refund too: the key replays it, it is no second attempt", async () => {
    const { stripe, secretKey } = await newStripe();
    const intent = await paid(stripe, 1900);
    const key = randomUUID();
    const body = `payment_intent=${intent.id}&amount=2500`;
    const refused = await postRefund(secretKey, body, key);
    expect(refused.status).toBe(400);
    expect(refused.json.error).toMatchObject({ code: "amount_too_large" });
    const again = await postRefund(secretKey, body, key);
    expect(again.text).toBe(refused.text);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
  });

  it("answers 400 idempotency_error to the same key with another amount, and refunds nothing more", async () => {
    const { stripe } = await newStripe();
    const intent = await paid(stripe, 1900);
    const key = randomUUID();
    await stripe.refunds.create(
      { payment_intent: intent.id, amount: 500 },
      { idempotencyKey: key },
    );
    const error = await stripeErrorOf(
      stripe.refunds.create({ payment_intent: intent.id, amount: 600 }, { idempotencyKey: key }),
    );
    expect(error).toBeInstanceOf(Stripe.errors.StripeIdempotencyError);
    expect(error).toMatchObject({ statusCode: 400, type: "StripeIdempotencyError" });
    expect((await stripe.charges.retrieve(intent.latest_charge as string)).amount_refunded).toBe(
      500,
    );
  });

  it("answers 400 idempotency_error to a PaymentIntent's key reused for a refund: one namespace of keys", async () => {
    const { stripe } = await newStripe();
    const key = randomUUID();
    const intent = await stripe.paymentIntents.create(
      { amount: 1900, currency: "usd", payment_method: "pm_card_visa", confirm: true },
      { idempotencyKey: key },
    );
    const error = await stripeErrorOf(
      stripe.refunds.create({ payment_intent: intent.id }, { idempotencyKey: key }),
    );
    expect(error).toBeInstanceOf(Stripe.errors.StripeIdempotencyError);
    expect((await stripe.refunds.list({ payment_intent: intent.id })).data).toEqual([]);
  });

  it("answers 409 to the same key while its first refund runs; a retry afterwards replays it", async () => {
    const { stripe, secretKey } = await newStripe();
    const intent = await paid(stripe, 1900);
    const key = randomUUID();
    const body = `payment_intent=${intent.id}&amount=400`;
    await setFaults(simulator, { latencyMs: 1500 });
    const slow = postRefund(secretKey, body, key);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const busy = await postRefund(secretKey, body, key);
    expect(busy.status).toBe(409);
    expect(busy.json.error).toMatchObject({
      type: "idempotency_error",
      code: "idempotency_key_in_use",
    });
    const first = await slow;
    expect(first.status).toBe(200);
    await setFaults(simulator, {});
    expect((await postRefund(secretKey, body, key)).text).toBe(first.text);
    expect((await ledgerRefunds(intent.id)).map((refund) => refund.amount)).toEqual([400]);
  });

  it("stores nothing for a request that fails validation: the key stays usable", async () => {
    const { stripe, secretKey } = await newStripe();
    const intent = await paid(stripe, 1900);
    const key = randomUUID();
    expect((await postRefund(secretKey, `payment_intent=${intent.id}&amount=x`, key)).status).toBe(
      400,
    );
    expect((await postRefund(secretKey, "payment_intent=pi_doesnotexist", key)).status).toBe(400);
    const valid = await postRefund(secretKey, `payment_intent=${intent.id}`, key);
    expect(valid.status).toBe(200);
    expect(valid.headers.get("idempotent-replayed")).toBeNull();
  });
});

describe("POST /v1/refunds with the simulator's faults", () => {
  it("waits out latencyMs after claiming the key, as a charge does", async () => {
    const { stripe } = await newStripe();
    const intent = await paid(stripe);
    await setFaults(simulator, { latencyMs: 600 });
    const started = performance.now();
    await stripe.refunds.create({ payment_intent: intent.id, amount: 100 });
    expect(performance.now() - started).toBeGreaterThanOrEqual(550);
  });

  it("http_500_stored_after_charge: refunds, then answers and replays a 500; the list shows the refund", async () => {
    const { stripe, secretKey } = await newStripe();
    const intent = await paid(stripe, 1900);
    const key = randomUUID();
    const body = `payment_intent=${intent.id}&amount=800`;
    await setFaults(simulator, { failNext: "http_500_stored_after_charge" });
    const failed = await postRefund(secretKey, body, key);
    expect(failed.status).toBe(500);
    expect(failed.headers.get("stripe-should-retry")).toBe("false");
    const replayed = await postRefund(secretKey, body, key);
    expect(replayed.status).toBe(500);
    expect(replayed.headers.get("idempotent-replayed")).toBe("true");
    const listed = await stripe.refunds.list({ payment_intent: intent.id });
    expect(listed.data.map((refund) => refund.amount)).toEqual([800]);
  });

  it("http_500_stored_before_charge: the same replayed 500, and nothing refunded", async () => {
    const { stripe, secretKey } = await newStripe();
    const intent = await paid(stripe, 1900);
    const key = randomUUID();
    const body = `payment_intent=${intent.id}&amount=800`;
    await setFaults(simulator, { failNext: "http_500_stored_before_charge" });
    expect((await postRefund(secretKey, body, key)).status).toBe(500);
    expect((await postRefund(secretKey, body, key)).status).toBe(500);
    expect((await stripe.refunds.list({ payment_intent: intent.id })).data).toEqual([]);
    expect((await stripe.charges.retrieve(intent.latest_charge as string)).amount_refunded).toBe(0);
  });

  it("drop_connection: the refund is made and its answer lost; the SDK's retry under the key gets it, one refund", async () => {
    const secretKey = await newSecretKey(simulator);
    const stripe = stripeFor(simulator, secretKey, { maxNetworkRetries: 2 });
    const intent = await paid(stripe, 1900);
    await setFaults(simulator, { failNext: "drop_connection" });
    const refund = await stripe.refunds.create(
      { payment_intent: intent.id, amount: 650 },
      { idempotencyKey: randomUUID() },
    );
    expect(refund.amount).toBe(650);
    expect(refund.lastResponse.headers["idempotent-replayed"]).toBe("true");
    expect((await ledgerRefunds(intent.id)).map((listed) => listed.id)).toEqual([refund.id]);
  });
});

describe("refunds of one payment in flight at once, under different keys", () => {
  // 20 refunds of 700 against 5000: seven fit (4900), and what is left (100)
  // is too little for any other. A check of what is left that is not made
  // under the charge's lock lets several read the same remainder and give
  // back more than the payment took (or trips the charge's CHECK, a 500).
  const CHARGED = 5000;
  const EACH = 700;
  const FIT = Math.floor(CHARGED / EACH);

  it("20 SDK calls at once (Promise.all over HTTP): never more than the charge, the ledger holds exactly the successes, every other call 400", async () => {
    const { stripe } = await newStripe();
    const intent = await paid(stripe, CHARGED);
    // Each waits this long holding its own key, so all 20 reach the charge together.
    await setFaults(simulator, { latencyMs: 200 });
    const outcomes = await Promise.allSettled(
      Array.from({ length: 20 }, () =>
        stripe.refunds.create(
          { payment_intent: intent.id, amount: EACH },
          { idempotencyKey: randomUUID() },
        ),
      ),
    );
    await setFaults(simulator, {});

    const refunds = outcomes.flatMap((outcome) =>
      outcome.status === "fulfilled" ? [outcome.value] : [],
    );
    const refusals = outcomes.flatMap((outcome) =>
      outcome.status === "rejected" ? [outcome.reason as unknown] : [],
    );
    const refunded = sum(refunds.map((refund) => refund.amount));
    expect(refunded).toBeLessThanOrEqual(CHARGED);
    expect(refunds).toHaveLength(FIT);
    for (const refusal of refusals) {
      expect(refusal).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
      expect(refusal).toMatchObject({ statusCode: 400, code: "amount_too_large" });
    }
    expect(refusals).toHaveLength(20 - FIT);

    const ids = refunds.map((refund) => refund.id).sort();
    const listed = await stripe.refunds.list({ payment_intent: intent.id, limit: 100 });
    expect(listed.data.map((refund) => refund.id).sort()).toEqual(ids);
    const ledger = await ledgerRefunds(intent.id);
    expect(ledger.map((refund) => refund.id).sort()).toEqual(ids);
    expect(sum(ledger.map((refund) => refund.amount))).toBe(refunded);
    expect((await stripe.charges.retrieve(intent.latest_charge as string)).amount_refunded).toBe(
      refunded,
    );
  });

  // Provable overlap needs a server: PGlite runs one statement at a time.
  itOnServer(
    "concurrency",
    "20 raw requests provably in flight together: never more than the charge, every other one 400",
    async () => {
      const { stripe, secretKey } = await newStripe();
      const intent = await paid(stripe, CHARGED);
      const request = (key: string) => ({
        method: "POST",
        path: "/v1/refunds",
        headers: {
          Authorization: `Bearer ${secretKey}`,
          "Idempotency-Key": key,
          "Content-Type": "application/x-www-form-urlencoded",
        },
        body: `payment_intent=${intent.id}&amount=${EACH}`,
      });
      const batch = await sendOverlapping(
        simulator.url,
        Array.from({ length: 20 }, () => request(randomUUID())),
      );

      expect(
        Math.min(...batch.responses.map((response) => response.receivedAt)),
      ).toBeGreaterThanOrEqual(batch.lastSentAt);
      const refunds = batch.responses
        .filter((response) => response.status === 200)
        .map((response) => JSON.parse(response.body) as { id: string; amount: number });
      const refusals = batch.responses.filter((response) => response.status !== 200);
      expect(sum(refunds.map((refund) => refund.amount))).toBeLessThanOrEqual(CHARGED);
      expect(refunds).toHaveLength(FIT);
      for (const refusal of refusals) {
        expect(refusal.status).toBe(400);
        expect(JSON.parse(refusal.body)).toMatchObject({ error: { code: "amount_too_large" } });
      }
      const ledger = await ledgerRefunds(intent.id);
      expect(ledger.map((refund) => refund.id).sort()).toEqual(
        refunds.map((refund) => refund.id).sort(),
      );
    },
  );
});

describe("GET /v1/refunds and /v1/refunds/:id", () => {
  it("retrieves one refund, and 404s another account's or an unknown one", async () => {
    const { stripe } = await newStripe();
    const { stripe: other } = await newStripe();
    const intent = await paid(stripe);
    const refund = await stripe.refunds.create({ payment_intent: intent.id, amount: 100 });
    const read = await stripe.refunds.retrieve(refund.id);
    expect({ ...read, lastResponse: undefined }).toEqual({ ...refund, lastResponse: undefined });
    for (const [client, id] of [
      [other, refund.id],
      [stripe, "re_doesnotexist"],
    ] as const) {
      expect(await stripeErrorOf(client.refunds.retrieve(id))).toMatchObject({
        statusCode: 404,
        code: "resource_missing",
        param: "refund",
      });
    }
  });

  it("lists newest first, a page at a time with limit and starting_after, has_more until the last", async () => {
    const { stripe } = await newStripe();
    const intent = await paid(stripe, 5000);
    const made: string[] = [];
    for (let n = 1; n <= 7; n++)
      made.push((await stripe.refunds.create({ payment_intent: intent.id, amount: n })).id);
    const newestFirst = [...made].reverse();

    const first = await stripe.refunds.list({ payment_intent: intent.id, limit: 3 });
    expect(first).toMatchObject({ object: "list", url: "/v1/refunds", has_more: true });
    expect(first.data.map((refund) => refund.id)).toEqual(newestFirst.slice(0, 3));
    const second = await stripe.refunds.list({
      payment_intent: intent.id,
      limit: 3,
      starting_after: first.data.at(-1)!.id,
    });
    expect(second.data.map((refund) => refund.id)).toEqual(newestFirst.slice(3, 6));
    expect(second.has_more).toBe(true);
    const last = await stripe.refunds.list({
      payment_intent: intent.id,
      limit: 3,
      starting_after: second.data.at(-1)!.id,
    });
    expect(last.data.map((refund) => refund.id)).toEqual(newestFirst.slice(6));
    expect(last.has_more).toBe(false);

    // The SDK's auto-pagination walks the same pages.
    const walked: string[] = [];
    for await (const refund of stripe.refunds.list({ payment_intent: intent.id, limit: 2 }))
      walked.push(refund.id);
    expect(walked).toEqual(newestFirst);
  });

  it("lists only the refunds of the PaymentIntent or charge asked for, and only the caller's", async () => {
    const { stripe } = await newStripe();
    const { stripe: other } = await newStripe();
    const [one, two] = [await paid(stripe), await paid(stripe)];
    const ofOne = await stripe.refunds.create({ payment_intent: one.id, amount: 100 });
    const ofTwo = await stripe.refunds.create({ payment_intent: two.id, amount: 200 });
    await other.refunds.create({ payment_intent: (await paid(other)).id, amount: 300 });

    expect((await stripe.refunds.list({ payment_intent: one.id })).data.map((r) => r.id)).toEqual([
      ofOne.id,
    ]);
    expect(
      (await stripe.refunds.list({ charge: two.latest_charge as string })).data.map((r) => r.id),
    ).toEqual([ofTwo.id]);
    expect((await stripe.refunds.list()).data.map((r) => r.id)).toEqual([ofTwo.id, ofOne.id]);
    // Another account's PaymentIntent has no refunds for this one.
    expect((await other.refunds.list({ payment_intent: one.id })).data).toEqual([]);
  });

  it("refuses a cursor it does not know, and the parameters it does not implement", async () => {
    const { stripe } = await newStripe();
    expect(
      await stripeErrorOf(stripe.refunds.list({ starting_after: "re_doesnotexist" })),
    ).toMatchObject({ statusCode: 400, code: "resource_missing", param: "starting_after" });
    expect(await stripeErrorOf(stripe.refunds.list({ ending_before: "re_1" }))).toMatchObject({
      statusCode: 400,
      code: "parameter_unknown",
      param: "ending_before",
    });
    expect(await stripeErrorOf(stripe.refunds.list({ limit: 101 }))).toMatchObject({
      statusCode: 400,
      code: "parameter_invalid_integer",
      param: "limit",
    });
  });
});
