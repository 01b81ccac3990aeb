import { randomUUID } from "node:crypto";
import Stripe from "stripe";
import { describe, expect, it } from "vitest";
import {
  adminFetch,
  ledgerFor,
  newSecretKey,
  postIntent,
  setFaults,
  withTestSimulator,
  stripeFor,
} from "@/lib/testing/payment-simulator";

/**
 * Injected failures (PUT /_simulator/faults), and the SDK's own retries
 * through them: with the same Idempotency-Key on every attempt, a 500 or a
 * lost response still ends in exactly one charge.
 */
const simulator = withTestSimulator();

const VISA = "amount=1900&currency=usd&payment_method=pm_card_visa&confirm=true";
const params = { amount: 1900, currency: "usd", payment_method: "pm_card_visa", confirm: true };

describe("the fault settings", () => {
  it("are read back, replaced whole by PUT, and cleared by PUT {}", async () => {
    const set = await setFaults(simulator, { latencyMs: 250, failNext: "http_500" });
    expect(set.status).toBe(200);
    expect(await set.json()).toEqual({ latencyMs: 250, failNext: "http_500" });
    expect(await (await adminFetch(simulator, "/_simulator/faults")).json()).toEqual({
      latencyMs: 250,
      failNext: "http_500",
    });
    expect(await (await setFaults(simulator, { latencyMs: 100 })).json()).toEqual({
      latencyMs: 100,
      failNext: null,
    });
    expect(await (await setFaults(simulator, {})).json()).toEqual({ latencyMs: 0, failNext: null });
  });

  it.each([
    ['{"latencyMs": -1}'],
    ['{"latencyMs": 60000}'],
    ['{"failNext": "explode"}'],
    ['{"latency": 5}'],
    ["not json"],
  ])("refuses %s with 400", async (body) => {
    const response = await adminFetch(simulator, "/_simulator/faults", { method: "PUT", body });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      error: expect.objectContaining({ type: "invalid_request_error" }),
    });
  });
});

describe("failNext: http_500", () => {
  it("fails the next request once, before the ledger: nothing charged or saved, so the same key runs afresh", async () => {
    await setFaults(simulator, { failNext: "http_500" });
    const secretKey = await newSecretKey(simulator);
    const key = randomUUID();
    const failed = await postIntent(simulator, { secretKey, key, body: VISA });
    expect(failed.status).toBe(500);
    expect(failed.headers.get("request-id")).toMatch(/^req_/);
    expect(JSON.parse(failed.text)).toEqual({
      error: expect.objectContaining({ type: "api_error" }),
    });
    expect((await ledgerFor(simulator, { idempotencyKey: key })).charges).toHaveLength(0);

    const retry = await postIntent(simulator, { secretKey, key, body: VISA });
    expect(retry.status).toBe(200);
    expect(retry.headers.get("idempotent-replayed")).toBeNull();
    expect((await ledgerFor(simulator, { idempotencyKey: key })).charges).toHaveLength(1);
  });

  it("is retried by the SDK with the same key: one charge", async () => {
    await setFaults(simulator, { failNext: "http_500" });
    const stripe = stripeFor(simulator, await newSecretKey(simulator));
    const sent: (string | undefined)[] = [];
    stripe.on("request", (event: { idempotency_key?: string }) => sent.push(event.idempotency_key));
    const key = randomUUID();

    const intent = await stripe.paymentIntents.create(params, { idempotencyKey: key });
    expect(intent.status).toBe("succeeded");
    expect(sent).toEqual([key, key]);
    expect((await ledgerFor(simulator, { idempotencyKey: key })).charges).toHaveLength(1);
  });

  it("surfaces as StripeAPIError when the SDK may not retry", async () => {
    await setFaults(simulator, { failNext: "http_500" });
    const error = await stripeFor(simulator, await newSecretKey(simulator), {
      maxNetworkRetries: 0,
    })
      .paymentIntents.create(params, { idempotencyKey: randomUUID() })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(Stripe.errors.StripeAPIError);
    expect(error).toMatchObject({ statusCode: 500 });
  });
});

describe("failNext: drop_connection", () => {
  it("charges and saves, then loses the answer; the retry with the same key gets it replayed", async () => {
    await setFaults(simulator, { failNext: "drop_connection" });
    const secretKey = await newSecretKey(simulator);
    const key = randomUUID();
    await expect(postIntent(simulator, { secretKey, key, body: VISA })).rejects.toThrow(TypeError);
    expect((await ledgerFor(simulator, { idempotencyKey: key })).charges).toHaveLength(1);

    const retry = await postIntent(simulator, { secretKey, key, body: VISA });
    expect(retry.status).toBe(200);
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    expect((await ledgerFor(simulator, { idempotencyKey: key })).charges).toHaveLength(1);
  });

  it("is survived by the SDK's retry: the first charge comes back, replayed", async () => {
    await setFaults(simulator, { failNext: "drop_connection" });
    const stripe = stripeFor(simulator, await newSecretKey(simulator));
    const key = randomUUID();
    const intent = await stripe.paymentIntents.create(params, { idempotencyKey: key });
    expect(intent.status).toBe("succeeded");
    expect(intent.lastResponse.headers["idempotent-replayed"]).toBe("true");
    const ledger = await ledgerFor(simulator, { idempotencyKey: key });
    expect(ledger.charges).toEqual([expect.objectContaining({ payment_intent: intent.id })]);
  });

  it("is one-shot: of several concurrent requests exactly one loses its answer", async () => {
    await setFaults(simulator, { failNext: "drop_connection" });
    const results = await Promise.allSettled(
      Array.from({ length: 5 }, async () =>
        postIntent(simulator, {
          secretKey: await newSecretKey(simulator),
          key: randomUUID(),
          body: VISA,
        }),
      ),
    );
    const outcomes = results.map((result) =>
      result.status === "fulfilled"
        ? `${result.value.status} ${result.value.text.slice(0, 200)}`
        : "dropped",
    );
    expect(outcomes.filter((outcome) => outcome === "dropped")).toHaveLength(1);
    expect(
      outcomes.filter((outcome) => outcome !== "dropped" && !outcome.startsWith("200 ")),
    ).toEqual([]);
  });
});

describe("latencyMs", () => {
  it("holds each charge that long", async () => {
    await setFaults(simulator, { latencyMs: 400 });
    const started = performance.now();
    expect(
      (
        await postIntent(simulator, {
          secretKey: await newSecretKey(simulator),
          key: randomUUID(),
          body: VISA,
        })
      ).status,
    ).toBe(200);
    expect(performance.now() - started).toBeGreaterThanOrEqual(380);
  });
});

describe("failNext: http_500_stored_after_charge / http_500_stored_before_charge (Stripe's indeterminate 500)", () => {
  it("charges, then answers 500 and stores it: every retry with the key replays the 500, and the SDK is told not to retry", async () => {
    await setFaults(simulator, { failNext: "http_500_stored_after_charge" });
    const secretKey = await newSecretKey(simulator);
    const key = randomUUID();
    const failed = await postIntent(simulator, { secretKey, key, body: VISA });
    expect(failed.status).toBe(500);
    expect(failed.headers.get("stripe-should-retry")).toBe("false");
    expect(JSON.parse(failed.text)).toEqual({
      error: expect.objectContaining({
        type: "api_error",
        message: expect.stringContaining("indeterminate"),
      }),
    });
    expect((await ledgerFor(simulator, { idempotencyKey: key })).charges).toEqual([
      expect.objectContaining({ status: "succeeded" }),
    ]);

    const replayed = await postIntent(simulator, { secretKey, key, body: VISA });
    expect(replayed.status).toBe(500);
    expect(replayed.text).toBe(failed.text);
    expect(replayed.headers.get("idempotent-replayed")).toBe("true");
    expect(replayed.headers.get("stripe-should-retry")).toBe("false");
    expect((await ledgerFor(simulator, { idempotencyKey: key })).charges).toHaveLength(1);
  });

  it("before the charge: the same stored, replayed 500, and nothing in the ledger", async () => {
    await setFaults(simulator, { failNext: "http_500_stored_before_charge" });
    const secretKey = await newSecretKey(simulator);
    const key = randomUUID();
    expect((await postIntent(simulator, { secretKey, key, body: VISA })).status).toBe(500);
    const replayed = await postIntent(simulator, { secretKey, key, body: VISA });
    expect(replayed.status).toBe(500);
    expect(replayed.headers.get("idempotent-replayed")).toBe("true");
    expect((await ledgerFor(simulator, { idempotencyKey: key })).payment_intents).toHaveLength(0);
  });
});

describe("GET /v1/payment_intents/search", () => {
  it("finds an account's payment intent by its metadata, and no other account's", async () => {
    const secretKey = await newSecretKey(simulator);
    const tag = `order-${randomUUID()}`;
    const stripe = stripeFor(simulator, secretKey);
    const created = await stripe.paymentIntents.create({
      ...params,
      metadata: { merchant_ref: tag },
    });
    await stripe.paymentIntents.create({ ...params, metadata: { merchant_ref: `${tag}-other` } });

    const found = await stripe.paymentIntents.search({
      query: `metadata['merchant_ref']:'${tag}'`,
    });
    expect(found.object).toBe("search_result");
    expect(found.data.map((intent) => intent.id)).toEqual([created.id]);
    expect(
      (
        await stripe.paymentIntents.search({
          query: `metadata['merchant_ref']:'${tag}' AND status:'succeeded'`,
        })
      ).data,
    ).toHaveLength(1);
    expect(
      (
        await stripe.paymentIntents.search({
          query: `metadata['merchant_ref']:'${tag}' AND status:'canceled'`,
        })
      ).data,
    ).toHaveLength(0);
    expect(
      (
        await stripeFor(simulator, await newSecretKey(simulator)).paymentIntents.search({
          query: `metadata['merchant_ref']:'${tag}'`,
        })
      ).data,
    ).toHaveLength(0);
  });

  it("refuses a query it does not understand with 400 invalid_request_error", async () => {
    const stripe = stripeFor(simulator, await newSecretKey(simulator), { maxNetworkRetries: 0 });
    await expect(stripe.paymentIntents.search({ query: "amount>100" })).rejects.toBeInstanceOf(
      Stripe.errors.StripeInvalidRequestError,
    );
  });
});
