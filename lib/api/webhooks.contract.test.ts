import { randomUUID } from "node:crypto";
import Stripe from "stripe";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { LOCAL_SIMULATOR_SECRET_KEY } from "@/lib/payments/simulator/process";
import { PROVIDER_KEY_METADATA } from "@/lib/payments/stripe-provider";
import {
  baseUrl,
  createAccount,
  getOrder,
  postOrder,
  type ApiAccount,
} from "@/lib/testing/api-client";
import { closeTestDb } from "@/lib/testing/database";
import { appSimulator } from "@/lib/testing/payment-simulator";
import { itOnServer } from "@/lib/testing/postgres-server-only";
import {
  answerChallenge,
  eventRecorded,
  loggedDeliveries,
  orderState,
  orderWebhooks,
  pendingOrder,
  postWebhook,
  recordedEvents,
  signed,
  signedBody,
  stripeEvent,
} from "@/lib/testing/webhooks";

/**
 * 3-D Secure and the provider's webhooks, against the built app over real
 * HTTP: a payment that waits on the shopper's bank is a pending order; the
 * provider's event, delivered at least once, duplicated and out of order,
 * settles it once; an event that is forged, stale or not an event changes
 * nothing. The app's simulator posts its real events to the app; the tests
 * also sign events of their own with the app's secret, to deliver them as
 * often, as late and as out of order as they like.
 */
let account: ApiAccount;
let stripe: Stripe;

beforeAll(async () => {
  account = await createAccount();
  const { url } = appSimulator();
  const simulator = new URL(url);
  stripe = new Stripe(LOCAL_SIMULATOR_SECRET_KEY, {
    host: simulator.hostname,
    port: Number(simulator.port),
    protocol: "http",
  });
});
afterAll(closeTestDb);

const poll = { timeout: 15_000, interval: 50 };

/** The PaymentIntent as the provider shows it now, for an event of our own about it. */
async function intentObject(id: string) {
  return (await stripe.paymentIntents.retrieve(id)) as unknown as { id: string } & Record<
    string,
    unknown
  >;
}

describe("a card that asks for 3-D Secure", () => {
  it("is a pending order: 202 with the bank's page, replayed as it was; GET shows it pending with its PaymentIntent", async () => {
    const pending = await pendingOrder(account.token);

    expect(new URL(pending.challengeUrl).origin).toBe(appSimulator().url);
    expect(pending.paymentIntentId).toMatch(/^pi_/);
    const replay = await postOrder({ token: account.token, key: pending.key, body: pending.body });
    expect(replay.response.status).toBe(202);
    expect(replay.response.headers.get("idempotent-replayed")).toBe("true");
    expect(JSON.parse(replay.text)).toEqual(JSON.parse(pending.text));
    const order = await getOrder({ token: account.token, id: pending.id });
    expect(JSON.parse(order.text)).toMatchObject({
      id: pending.id,
      status: "pending",
      payment: { id: pending.paymentIntentId, status: "pending" },
    });
    expect(await orderState(pending.id)).toMatchObject({ status: "pending", shipments: 0 });
  });

  it("completed at the bank: the provider's event makes it paid and ships it once", async () => {
    const pending = await pendingOrder(account.token);

    const back = await answerChallenge(pending.challengeUrl, "complete");

    expect(back.status).toBe(303);
    expect(new URL(back.headers.get("location")!).searchParams.get("redirect_status")).toBe(
      "succeeded",
    );
    await vi.waitFor(
      async () =>
        expect(await orderState(pending.id)).toMatchObject({
          status: "paid",
          payment_status: "succeeded",
          settled_by: "webhook",
          shipments: 1,
        }),
      poll,
    );
    expect(await recordedEvents(pending.paymentIntentId)).toMatchObject([
      { type: "payment_intent.succeeded", outcome: "paid" },
    ]);
    const order = await getOrder({ token: account.token, id: pending.id });
    expect(JSON.parse(order.text)).toMatchObject({
      status: "paid",
      payment: { status: "succeeded" },
    });
    // The key's page tells the same: who settled the payment, and the event that did.
    const key = await fetch(`${baseUrl()}/api/keys/${pending.key}`, {
      headers: { Authorization: `Bearer ${account.token}` },
    });
    expect(await key.json()).toMatchObject({
      payments: [
        {
          providerPaymentId: pending.paymentIntentId,
          status: "succeeded",
          settledBy: "webhook",
          events: [{ type: "payment_intent.succeeded", outcome: "paid" }],
        },
      ],
    });
  });

  it("failed at the bank: the event makes it failed, and nothing ships", async () => {
    const pending = await pendingOrder(account.token);

    await answerChallenge(pending.challengeUrl, "fail");

    await vi.waitFor(
      async () =>
        expect(await orderState(pending.id)).toMatchObject({
          status: "failed",
          payment_status: "declined",
          decline_code: "payment_intent_authentication_failure",
          shipments: 0,
        }),
      poll,
    );
  });
});

describe("each event is acted on once", () => {
  it("a duplicate is a 200 that changes nothing", async () => {
    const pending = await pendingOrder(account.token);
    const delivery = signed(
      stripeEvent("payment_intent.succeeded", await intentObject(pending.paymentIntentId)),
    );

    const first = await postWebhook(delivery);
    const second = await postWebhook(delivery);

    expect(first).toMatchObject({ status: 200, json: { received: true, outcome: "paid" } });
    expect(second).toMatchObject({ status: 200, json: { outcome: "duplicate" } });
    expect(await orderState(pending.id)).toMatchObject({ status: "paid", shipments: 1 });
    // The log keeps both deliveries; the order's account reads them, another gets 404.
    const seen = await orderWebhooks(account.token, pending.id);
    expect(seen).toMatchObject({
      status: 200,
      json: { object: "order_webhooks", orderId: pending.id, shipments: 1 },
    });
    expect(seen.json.deliveries).toMatchObject([
      { eventId: JSON.parse(delivery.body).id, type: "payment_intent.succeeded", outcome: "paid" },
      { eventId: JSON.parse(delivery.body).id, outcome: "duplicate" },
    ]);
    const stranger = await createAccount();
    expect((await orderWebhooks(stranger.token, pending.id)).status).toBe(404);
    expect((await orderWebhooks(account.token, "not-a-uuid")).status).toBe(404);
  });

  it("an event older than the state changes nothing: a failure after a success, a success after a failure", async () => {
    const paidFirst = await pendingOrder(account.token);
    const failedFirst = await pendingOrder(account.token);
    const paidIntent = await intentObject(paidFirst.paymentIntentId);
    const failedIntent = await intentObject(failedFirst.paymentIntentId);

    const deliveries = [
      stripeEvent("payment_intent.succeeded", paidIntent),
      stripeEvent("payment_intent.payment_failed", failedIntent),
      stripeEvent("payment_intent.payment_failed", paidIntent),
      stripeEvent("payment_intent.succeeded", failedIntent),
    ];
    const outcomes = [];
    for (const event of deliveries) outcomes.push((await postWebhook(signed(event))).json.outcome);

    expect(outcomes).toEqual(["paid", "failed", "stale", "stale"]);
    expect(await orderState(paidFirst.id)).toMatchObject({ status: "paid", shipments: 1 });
    expect(await orderState(failedFirst.id)).toMatchObject({ status: "failed", shipments: 0 });
  });

  it("a payment paid at once: its own answer moves the order, and its event finds nothing to change", async () => {
    const { response, text } = await postOrder({ token: account.token, key: randomUUID() });
    expect(response.status).toBe(201);
    const order = JSON.parse(text) as { id: string; payment: { id: string } };

    await vi.waitFor(
      async () =>
        expect(await recordedEvents(order.payment.id)).toMatchObject([
          { type: "payment_intent.succeeded", outcome: "unchanged" },
        ]),
      poll,
    );
    expect(await orderState(order.id)).toMatchObject({
      status: "paid",
      settled_by: null,
      shipments: 1,
    });
  });

  it("one of the shop's payments not recorded yet: 503 with Retry-After, and the event is not kept, so its next delivery counts", async () => {
    const event = stripeEvent("payment_intent.succeeded", {
      id: `pi_unrecorded_${randomUUID().replaceAll("-", "")}`,
      object: "payment_intent",
      metadata: { [PROVIDER_KEY_METADATA]: "oncepay:someone:abc" },
    });

    const answer = await postWebhook(signed(event));

    expect(answer.status).toBe(503);
    expect(answer.headers.get("retry-after")).toBe("1");
    expect(answer.json.type).toBe("/problems/payment-not-recorded-yet");
    expect(await eventRecorded(event.id)).toBe(false);
    // Refused, and still a delivery the log shows.
    expect(await loggedDeliveries(event.data.object.id)).toEqual(["not_recorded_yet"]);
  });

  it("a payment that is not the shop's: 200 not_ours, recorded", async () => {
    const event = stripeEvent("payment_intent.succeeded", {
      id: `pi_elsewhere_${randomUUID().replaceAll("-", "")}`,
      object: "payment_intent",
      metadata: {},
    });

    expect((await postWebhook(signed(event))).json.outcome).toBe("not_ours");
    expect(await eventRecorded(event.id)).toBe(true);
  });

  // 50 copies really at once need connections that run at once: PGlite serialises them.
  itOnServer(
    "sessions",
    "50 deliveries of one event at once: one state change, one shipment, 49 duplicates",
    async () => {
      const pending = await pendingOrder(account.token);
      const delivery = signed(
        stripeEvent("payment_intent.succeeded", await intentObject(pending.paymentIntentId)),
      );

      const answers = await Promise.all(Array.from({ length: 50 }, () => postWebhook(delivery)));

      const outcomes = answers.map((answer) => `${answer.status} ${String(answer.json.outcome)}`);
      expect(outcomes.filter((outcome) => outcome === "200 paid")).toHaveLength(1);
      expect(outcomes.filter((outcome) => outcome === "200 duplicate")).toHaveLength(49);
      expect(await orderState(pending.id)).toMatchObject({ status: "paid", shipments: 1 });
      expect(await recordedEvents(pending.paymentIntentId)).toHaveLength(1);
      const logged = await loggedDeliveries(pending.paymentIntentId);
      expect(logged).toHaveLength(50);
      expect(logged.filter((outcome) => outcome === "duplicate")).toHaveLength(49);
    },
  );
});

describe("the Duplicate webhooks demo: the provider delivers a paid order's event again", () => {
  async function redeliver(token: string, body: unknown) {
    const response = await fetch(`${baseUrl()}/api/demo/webhook-redeliveries`, {
      method: "POST",
      headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
      body: JSON.stringify(body),
    });
    return { status: response.status, json: (await response.json()) as Record<string, unknown> };
  }

  it("13 more copies, 10 at once and 3 late: the log shows 14 deliveries, one that paid; the order shipped once", async () => {
    const pending = await pendingOrder(account.token);
    await answerChallenge(pending.challengeUrl, "complete");
    await vi.waitFor(
      async () => expect(await orderState(pending.id)).toMatchObject({ status: "paid" }),
      poll,
    );

    const asked = await redeliver(account.token, { orderId: pending.id });

    expect(asked).toMatchObject({
      status: 200,
      json: {
        object: "webhook_redelivery",
        orderId: pending.id,
        events: [{ type: "payment_intent.succeeded" }],
        copiesPerEvent: 13,
      },
    });
    await vi.waitFor(async () => {
      const seen = await orderWebhooks(account.token, pending.id);
      const outcomes = (seen.json.deliveries as { outcome: string }[]).map((d) => d.outcome);
      expect(outcomes).toHaveLength(14);
      expect(outcomes.filter((outcome) => outcome === "paid")).toHaveLength(1);
      expect(outcomes.filter((outcome) => outcome === "duplicate")).toHaveLength(13);
    }, poll);
    expect(await orderState(pending.id)).toMatchObject({ status: "paid", shipments: 1 });
  });

  it("answers a caller without credentials 401, and a body that is not JSON 400, as the order's deliveries do", async () => {
    const pending = await pendingOrder(account.token);
    const anonymous = await fetch(`${baseUrl()}/api/demo/webhook-redeliveries`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ orderId: pending.id }),
    });
    expect(anonymous.status).toBe(401);
    expect((await fetch(`${baseUrl()}/api/orders/${pending.id}/webhooks`)).status).toBe(401);
    const notJson = await fetch(`${baseUrl()}/api/demo/webhook-redeliveries`, {
      method: "POST",
      headers: { Authorization: `Bearer ${account.token}`, "Content-Type": "application/json" },
      body: "{ orderId",
    });
    expect(notJson.status).toBe(400);
  });

  it("only for the caller's own order (404), with an order id (400)", async () => {
    const pending = await pendingOrder(account.token);
    const stranger = await createAccount();

    expect((await redeliver(stranger.token, { orderId: pending.id })).status).toBe(404);
    expect((await redeliver(account.token, { orderId: "nope" })).json.type).toBe(
      "/problems/invalid-body",
    );
    expect((await redeliver(account.token, [])).status).toBe(400);
  });
});

describe("what is refused changes nothing (4xx, nothing recorded)", () => {
  async function refusedWithNothingKept(
    delivery: Parameters<typeof postWebhook>[0],
    eventId: string,
    status: number,
    type: string,
  ) {
    const answer = await postWebhook(delivery);
    expect(answer.status).toBe(status);
    expect(answer.json.type).toBe(type);
    expect(await eventRecorded(eventId)).toBe(false);
  }

  it.each([
    ["no signature", (body: string) => ({ body })],
    [
      "another secret's signature",
      (body: string) => signed(JSON.parse(body), { secret: `whsec_${"x".repeat(32)}` }),
    ],
    [
      "a signature six minutes old",
      (body: string) =>
        signed(JSON.parse(body), { timestamp: Math.floor(Date.now() / 1000) - 360 }),
    ],
    ["a signature of another body", (body: string) => ({ ...signed({ other: true }), body })],
  ])("%s: 400 webhook-signature-invalid", async (_name, deliver) => {
    const pending = await pendingOrder(account.token);
    const event = stripeEvent(
      "payment_intent.succeeded",
      await intentObject(pending.paymentIntentId),
    );

    await refusedWithNothingKept(
      deliver(JSON.stringify(event)),
      event.id,
      400,
      "/problems/webhook-signature-invalid",
    );
    expect(await orderState(pending.id)).toMatchObject({ status: "pending", shipments: 0 });
  });

  it("a body over 256 KiB: 413; not JSON: 415; signed bytes that are not an event: 400", async () => {
    const event = stripeEvent("payment_intent.succeeded", {
      id: "pi_big",
      padding: "x".repeat(300 * 1024),
    });
    await refusedWithNothingKept(signed(event), event.id, 413, "/problems/body-too-large");
    const small = stripeEvent("payment_intent.succeeded", { id: "pi_small" });
    await refusedWithNothingKept(
      { ...signed(small), headers: { "Content-Type": "text/plain" } },
      small.id,
      415,
      "/problems/unsupported-media-type",
    );
    const notJson = signedBody("{ this is not json");
    await refusedWithNothingKept(notJson, "", 400, "/problems/malformed-json");
    const notAnEvent = signed({ id: "evt_not_an_event", hello: "world" });
    await refusedWithNothingKept(notAnEvent, "evt_not_an_event", 400, "/problems/malformed-json");
  });
});
