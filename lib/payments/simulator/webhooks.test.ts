import { randomUUID } from "node:crypto";
import Stripe from "stripe";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { newWebhookSecret } from "@/lib/payments/simulator/ids";
import type { PaymentSimulator } from "@/lib/payments/simulator/server";
import { signatureHeader } from "@/lib/payments/simulator/webhook-signature";
import {
  adminFetch,
  eventsOf,
  newSecretKey,
  startTestSimulator,
  stripeFor,
} from "@/lib/testing/payment-simulator";
import { stripeSchemaErrors } from "@/lib/testing/stripe-openapi";
import { startWebhookReceiver, type WebhookReceiver } from "@/lib/testing/webhook-receiver";

/**
 * Webhooks at the simulator: every settled payment and every refund is an
 * event, written with its change and posted, signed as Stripe signs, to each
 * of the account's endpoints until one attempt is answered 2xx; and, through
 * the admin API, delivered again, many times at once, late or out of order.
 */
let simulator: PaymentSimulator;
const receivers: WebhookReceiver[] = [];

beforeAll(async () => {
  // A schedule compressed to milliseconds, so retries and giving up fit in a test.
  simulator = await startTestSimulator({
    webhookDelivery: { retryScheduleMs: [30, 60], attemptTimeoutMs: 2_000, pollMs: 20 },
  });
});

afterAll(async () => {
  await simulator?.close();
  await Promise.all(receivers.map((receiver) => receiver.close()));
});

async function receiver(options: Parameters<typeof startWebhookReceiver>[0] = {}) {
  const started = await startWebhookReceiver(options);
  receivers.push(started);
  return started;
}

/** A new account with one endpoint at `url`, and the SDK on that account. */
async function accountWithEndpoint(url: string, enabledEvents: string[] = ["*"]) {
  const stripe = stripeFor(simulator, await newSecretKey(simulator));
  const endpoint = await stripe.webhookEndpoints.create({
    url,
    enabled_events: enabledEvents as Stripe.WebhookEndpointCreateParams.EnabledEvent[],
  });
  return { stripe, endpoint };
}

const payment = (paymentMethod: string) => ({
  amount: 1900,
  currency: "usd",
  payment_method: paymentMethod,
  confirm: true,
  automatic_payment_methods: { enabled: true, allow_redirects: "never" as const },
});

function verified(secret: string, webhook: { body: string; signature: string | undefined }) {
  // The SDK's own check, as the shop makes it: throws unless the body is signed with the secret.
  return Stripe.webhooks.constructEvent(webhook.body, webhook.signature ?? "", secret);
}

const poll = { timeout: 10_000, interval: 20 };

describe("POST /v1/webhook_endpoints", () => {
  it("makes an endpoint of the caller's account, showing its whsec_ secret once", async () => {
    const { endpoint } = await accountWithEndpoint("https://shop.example/api/webhooks/stripe");
    expect(endpoint).toMatchObject({
      object: "webhook_endpoint",
      url: "https://shop.example/api/webhooks/stripe",
      enabled_events: ["*"],
      status: "enabled",
      livemode: false,
    });
    expect(endpoint.secret).toMatch(/^whsec_[A-Za-z0-9]{32}$/);
    expect(stripeSchemaErrors("webhook_endpoint", endpoint)).toEqual([]);
  });

  it.each([
    ["no url", { enabled_events: ["*"] }, "url"],
    ["a relative url", { url: "/hooks", enabled_events: ["*"] }, "url"],
    ["no enabled_events", { url: "https://shop.example/h" }, "enabled_events"],
    [
      "an event type it never sends",
      { url: "https://shop.example/h", enabled_events: ["customer.created"] },
      "enabled_events",
    ],
  ])("refuses %s (400 naming the parameter)", async (_name, params, param) => {
    const stripe = stripeFor(simulator, await newSecretKey(simulator));
    const error = await stripe.webhookEndpoints
      .create(params as Stripe.WebhookEndpointCreateParams)
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    expect((error as Stripe.errors.StripeInvalidRequestError).param).toBe(param);
  });
});

describe("events", () => {
  it("posts payment_intent.succeeded, signed as Stripe signs, with the intent and the request that made it", async () => {
    const endpointReceiver = await receiver();
    const { stripe, endpoint } = await accountWithEndpoint(endpointReceiver.url);
    const key = randomUUID();

    const intent = await stripe.paymentIntents.create(payment("pm_card_visa"), {
      idempotencyKey: key,
    });

    await vi.waitFor(() => expect(endpointReceiver.received).toHaveLength(1), poll);
    const event = verified(endpoint.secret!, endpointReceiver.received[0]!);
    expect(event).toMatchObject({
      object: "event",
      type: "payment_intent.succeeded",
      livemode: false,
      pending_webhooks: 1,
      request: { idempotency_key: key },
      data: { object: { id: intent.id, status: "succeeded", amount_received: 1900 } },
    });
    expect(stripeSchemaErrors("event", event)).toEqual([]);
    expect(stripeSchemaErrors("payment_intent", event.data.object)).toEqual([]);
    const [recorded] = await eventsOf(simulator, intent.id);
    expect(recorded).toMatchObject({ id: event.id, type: "payment_intent.succeeded" });
    await vi.waitFor(
      async () =>
        expect((await eventsOf(simulator, intent.id))[0]!.deliveries).toMatchObject([
          { state: "delivered", attempts: 1, last_status: 200 },
        ]),
      poll,
    );
  });

  it("posts payment_intent.payment_failed for a decline and charge.refunded for a refund", async () => {
    const endpointReceiver = await receiver();
    const { stripe, endpoint } = await accountWithEndpoint(endpointReceiver.url);

    await stripe.paymentIntents.create(payment("pm_card_chargeDeclined")).catch(() => undefined);
    const paid = await stripe.paymentIntents.create(payment("pm_card_visa"));
    await stripe.refunds.create({ payment_intent: paid.id, amount: 500 });

    await vi.waitFor(() => expect(endpointReceiver.received).toHaveLength(3), poll);
    const events = endpointReceiver.received.map((webhook) => verified(endpoint.secret!, webhook));
    const failed = events.find((event) => event.type === "payment_intent.payment_failed")!;
    expect(failed.data.object).toMatchObject({
      status: "requires_payment_method",
      last_payment_error: { decline_code: "generic_decline" },
    });
    const refunded = events.find((event) => event.type === "charge.refunded")!;
    expect(refunded.data.object).toMatchObject({
      object: "charge",
      payment_intent: paid.id,
      amount_refunded: 500,
      refunded: false,
    });
    expect(stripeSchemaErrors("charge", refunded.data.object)).toEqual([]);
  });

  it("posts the 3-D Secure outcome when the challenge page settles it, with no API request behind it", async () => {
    const endpointReceiver = await receiver();
    const { stripe, endpoint } = await accountWithEndpoint(endpointReceiver.url);
    const intent = await stripe.paymentIntents.create(payment("pm_card_authenticationRequired"));
    expect(intent.status).toBe("requires_action");

    await fetch(`${simulator.url}/authenticate/${intent.id}`, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        client_secret: intent.client_secret!,
        authentication: "complete",
      }),
    });

    await vi.waitFor(() => expect(endpointReceiver.received).toHaveLength(1), poll);
    expect(verified(endpoint.secret!, endpointReceiver.received[0]!)).toMatchObject({
      type: "payment_intent.succeeded",
      request: { id: null, idempotency_key: null },
      data: { object: { id: intent.id, status: "succeeded" } },
    });
  });

  it("sends an endpoint only the types it enabled", async () => {
    const endpointReceiver = await receiver();
    const { stripe } = await accountWithEndpoint(endpointReceiver.url, ["charge.refunded"]);

    const paid = await stripe.paymentIntents.create(payment("pm_card_visa"));
    await stripe.refunds.create({ payment_intent: paid.id });

    await vi.waitFor(() => expect(endpointReceiver.received).toHaveLength(1), poll);
    expect(endpointReceiver.received[0]!.type).toBe("charge.refunded");
    const types = (await eventsOf(simulator, paid.id)).map((event) => [
      event.type,
      event.deliveries.length,
    ]);
    expect(types).toEqual([
      ["charge.refunded", 1],
      ["payment_intent.succeeded", 0],
    ]);
  });

  it("signs like the SDK's own test header", () => {
    const secret = newWebhookSecret();
    const payload = '{"id":"evt_1","object":"event"}';
    expect(signatureHeader(secret, payload, 1_700_000_000)).toBe(
      Stripe.webhooks.generateTestHeaderString({ payload, secret, timestamp: 1_700_000_000 }),
    );
  });
});

describe("retries", () => {
  it("retries a failed delivery on the schedule until an attempt is answered 2xx", async () => {
    const endpointReceiver = await receiver({ answer: (nth) => (nth <= 2 ? 503 : 200) });
    const { stripe } = await accountWithEndpoint(endpointReceiver.url);

    const intent = await stripe.paymentIntents.create(payment("pm_card_visa"));

    await vi.waitFor(
      async () =>
        expect((await eventsOf(simulator, intent.id))[0]!.deliveries).toMatchObject([
          { state: "delivered", attempts: 3, last_status: 200 },
        ]),
      poll,
    );
    const ids = new Set(endpointReceiver.received.map((webhook) => webhook.id));
    expect(endpointReceiver.received).toHaveLength(3);
    expect(ids.size).toBe(1);
  });

  it("takes a redirect or a refused connection for a failure, and gives up once the schedule runs out", async () => {
    const redirecting = await receiver({ answer: () => 302 });
    const { stripe } = await accountWithEndpoint(redirecting.url);
    const intent = await stripe.paymentIntents.create(payment("pm_card_visa"));

    await vi.waitFor(
      async () =>
        expect((await eventsOf(simulator, intent.id))[0]!.deliveries).toMatchObject([
          { state: "failed", attempts: 3, last_status: 302 },
        ]),
      poll,
    );
    expect(redirecting.received).toHaveLength(3);

    const closed = await receiver();
    await closed.close();
    const down = await accountWithEndpoint(closed.url);
    const unreachable = await down.stripe.paymentIntents.create(payment("pm_card_visa"));
    await vi.waitFor(async () => {
      const [delivery] = (await eventsOf(simulator, unreachable.id))[0]!.deliveries;
      expect(delivery).toMatchObject({ state: "failed", attempts: 3, last_status: null });
      expect(delivery!.last_error).toMatch(/ECONNREFUSED/);
    }, poll);
  });

  it("a delivery whose simulator stops mid-attempt is made again by another once its lease runs out", async () => {
    // The first request hangs (the attempt in flight when its simulator stops); later ones are answered.
    const endpointReceiver = await receiver({ delayMs: (nth) => (nth === 1 ? 60_000 : 0) });
    const stopping = await startTestSimulator({
      webhookDelivery: { retryScheduleMs: [30], attemptTimeoutMs: 1_000, pollMs: 20 },
    });
    const stripe = stripeFor(stopping, await newSecretKey(stopping));
    await stripe.webhookEndpoints.create({ url: endpointReceiver.url, enabled_events: ["*"] });
    const intent = await stripe.paymentIntents.create(payment("pm_card_visa"));
    await vi.waitFor(() => expect(endpointReceiver.received).toHaveLength(1), poll);

    await stopping.close();

    // This file's simulator takes it over once the lease (3 s here) has run out.
    await vi.waitFor(() => expect(endpointReceiver.received).toHaveLength(2), poll);
    expect(endpointReceiver.received[1]!.id).toBe(endpointReceiver.received[0]!.id);
    await vi.waitFor(
      async () =>
        expect((await eventsOf(simulator, intent.id))[0]!.deliveries).toMatchObject([
          { state: "delivered", attempts: 2, last_status: 200 },
        ]),
      poll,
    );
  });
});

describe("the admin API's delivery controls", () => {
  async function admin(path: string, body?: unknown) {
    const response = await adminFetch(simulator, path, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body ?? {}),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  }

  it("delivers an event again, N copies at once", async () => {
    const endpointReceiver = await receiver({ delayMs: () => 100 });
    const { stripe, endpoint } = await accountWithEndpoint(endpointReceiver.url);
    const intent = await stripe.paymentIntents.create(payment("pm_card_visa"));
    await vi.waitFor(() => expect(endpointReceiver.received).toHaveLength(1), poll);
    const eventId = endpointReceiver.received[0]!.id;

    const answer = await admin(`/_simulator/events/${eventId}/redeliver`, { copies: 10 });

    expect(answer.status).toBe(200);
    expect(answer.body.deliveries).toHaveLength(10);
    expect(endpointReceiver.received).toHaveLength(11);
    expect(new Set(endpointReceiver.received.map((webhook) => webhook.id))).toEqual(
      new Set([eventId]),
    );
    // Each copy is signed afresh and verifies; they overlapped at the endpoint.
    for (const webhook of endpointReceiver.received) verified(endpoint.secret!, webhook);
    expect(endpointReceiver.maxInFlight).toBeGreaterThan(1);
    const [event] = await eventsOf(simulator, intent.id);
    expect(event!.deliveries.filter((delivery) => delivery.state === "delivered")).toHaveLength(11);
  });

  it("delivers a copy late: 202 now, the copy after delayMs", async () => {
    const endpointReceiver = await receiver();
    const { stripe } = await accountWithEndpoint(endpointReceiver.url);
    await stripe.paymentIntents.create(payment("pm_card_visa"));
    await vi.waitFor(() => expect(endpointReceiver.received).toHaveLength(1), poll);
    const asked = Date.now();

    const answer = await admin(`/_simulator/events/${endpointReceiver.received[0]!.id}/redeliver`, {
      delayMs: 400,
    });

    expect(answer.status).toBe(202);
    expect(endpointReceiver.received).toHaveLength(1);
    await vi.waitFor(() => expect(endpointReceiver.received).toHaveLength(2), poll);
    expect(Date.now() - asked).toBeGreaterThanOrEqual(400);
  });

  it("holds an endpoint's deliveries, then releases them newest first: the wrong order", async () => {
    const endpointReceiver = await receiver();
    const { stripe, endpoint } = await accountWithEndpoint(endpointReceiver.url);
    expect((await admin(`/_simulator/webhook_endpoints/${endpoint.id}/hold`)).body).toEqual({
      id: endpoint.id,
      held: true,
    });

    const paid = await stripe.paymentIntents.create(payment("pm_card_visa"));
    await stripe.refunds.create({ payment_intent: paid.id, amount: 100 });
    await stripe.refunds.create({ payment_intent: paid.id, amount: 200 });
    const recorded = await eventsOf(simulator, paid.id);
    expect(recorded.map((event) => event.deliveries[0]!.state)).toEqual([
      "pending",
      "pending",
      "pending",
    ]);
    expect(endpointReceiver.received).toEqual([]);

    const answer = await admin(`/_simulator/webhook_endpoints/${endpoint.id}/release`, {
      order: "newest_first",
    });

    expect(answer.status).toBe(200);
    // eventsOf lists newest first: the order the endpoint was meant to get them in.
    expect(endpointReceiver.received.map((webhook) => webhook.id)).toEqual(
      recorded.map((event) => event.id),
    );
    const amounts = endpointReceiver.received
      .filter((webhook) => webhook.type === "charge.refunded")
      .map(
        (webhook) =>
          (JSON.parse(webhook.body) as { data: { object: { amount_refunded: number } } }).data
            .object.amount_refunded,
      );
    expect(amounts).toEqual([300, 100]);

    // Released: what comes next is delivered as usual.
    await stripe.paymentIntents.create(payment("pm_card_visa"));
    await vi.waitFor(() => expect(endpointReceiver.received).toHaveLength(4), poll);
  });

  it("refuses an unknown event or endpoint (404) and bad settings (400)", async () => {
    expect((await admin("/_simulator/events/evt_unknown/redeliver")).status).toBe(404);
    expect((await admin("/_simulator/webhook_endpoints/we_unknown/hold")).status).toBe(404);
    expect((await admin("/_simulator/webhook_endpoints/we_unknown/release")).status).toBe(404);
    expect((await admin("/_simulator/events/evt_x/redeliver", { copies: 0 })).status).toBe(400);
    expect((await admin("/_simulator/events/evt_x/redeliver", { copies: 101 })).status).toBe(400);
    expect((await admin("/_simulator/events/evt_x/redeliver", { extra: 1 })).status).toBe(400);
    expect(
      (await admin("/_simulator/webhook_endpoints/we_x/release", { order: "shuffled" })).status,
    ).toBe(400);
  });

  it("answers only the admin key", async () => {
    for (const [method, path] of [
      ["GET", "/_simulator/events"],
      ["GET", "/_simulator/webhook_endpoints"],
      ["POST", "/_simulator/events/evt_x/redeliver"],
    ] as const) {
      const response = await fetch(`${simulator.url}${path}`, { method });
      expect(response.status, `${method} ${path}`).toBe(401);
    }
  });
});

describe("the configured endpoint (SIMULATOR_WEBHOOK_URL, SIMULATOR_WEBHOOK_SECRET)", () => {
  it("posts the configured keys' events there, signed with the configured secret, once however many simulators start", async () => {
    const endpointReceiver = await receiver();
    const secretKey = `sk_test_${randomUUID().replaceAll("-", "")}`;
    const secret = newWebhookSecret();
    const options = {
      apiKeys: [secretKey],
      webhook: { url: endpointReceiver.url, secret },
      webhookDelivery: { pollMs: 20 },
    };
    const [one, two] = await Promise.all([
      startTestSimulator(options),
      startTestSimulator(options),
    ]);
    try {
      const intent = await stripeFor(one, secretKey).paymentIntents.create(payment("pm_card_visa"));

      await vi.waitFor(() => expect(endpointReceiver.received).toHaveLength(1), poll);
      expect(verified(secret, endpointReceiver.received[0]!).data.object).toMatchObject({
        id: intent.id,
      });
      const [event] = await eventsOf(one, intent.id);
      expect(event!.deliveries).toHaveLength(1);
    } finally {
      await Promise.all([one.close(), two.close()]);
    }
  });
});
