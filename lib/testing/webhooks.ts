import { randomUUID } from "node:crypto";
import type pg from "pg";
import { expect, inject } from "vitest";
import { signatureHeader } from "@/lib/payments/simulator/webhook-signature";
import { baseUrl, postOrder, cartBody } from "@/lib/testing/api-client";
import { testDb } from "@/lib/testing/database";

/**
 * Test helpers for the shop's webhook endpoint and 3-D Secure: events signed
 * as the provider signs them (with the app's own secret, or another),
 * delivered over real HTTP, and the rows they leave.
 */
export interface SignedDelivery {
  body: string;
  signature: string;
}

/** A Stripe event of `type` about `object`, with a new id unless one is given. */
export function stripeEvent(
  type: string,
  object: { id: string } & Record<string, unknown>,
  id = `evt_test_${randomUUID().replaceAll("-", "")}`,
) {
  return {
    id,
    object: "event",
    api_version: "2024-04-10",
    created: Math.floor(Date.now() / 1000),
    data: { object },
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    type,
  };
}

/** The event as a body and its Stripe-Signature, signed with the shared app's secret unless told otherwise. */
export function signed(
  event: unknown,
  options: { secret?: string; timestamp?: number } = {},
): SignedDelivery {
  return signedBody(JSON.stringify(event), options);
}

/** Any bytes, signed as the provider signs an event's. */
export function signedBody(
  body: string,
  options: { secret?: string; timestamp?: number } = {},
): SignedDelivery {
  const timestamp = options.timestamp ?? Math.floor(Date.now() / 1000);
  return {
    body,
    signature: signatureHeader(options.secret ?? inject("stripeWebhookSecret"), body, timestamp),
  };
}

export async function postWebhook(
  delivery: Partial<SignedDelivery> & { headers?: Record<string, string>; base?: string },
): Promise<{ status: number; json: Record<string, unknown>; headers: Headers }> {
  const response = await fetch(`${delivery.base ?? baseUrl()}/api/webhooks/stripe`, {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      ...(delivery.signature !== undefined && { "Stripe-Signature": delivery.signature }),
      ...delivery.headers,
    },
    body: delivery.body ?? "",
  });
  return {
    status: response.status,
    headers: response.headers,
    json: (await response.json()) as Record<string, unknown>,
  };
}

export interface PendingOrder {
  id: string;
  key: string;
  paymentIntentId: string;
  /** The bank's challenge page at the simulator. */
  challengeUrl: string;
  /** The checkout's body and whole answer, for a replay to be sent and compared. */
  body: unknown;
  text: string;
}

/** A checkout with the card that asks for 3-D Secure: 202 and a pending order. */
export async function pendingOrder(token: string, base?: string): Promise<PendingOrder> {
  const key = randomUUID();
  const body = cartBody({ paymentMethod: "pm_card_authenticationRequired" });
  const { response, text } = await postOrder({
    ...(base && { baseUrl: base }),
    token,
    key,
    body,
  });
  expect(response.status, text).toBe(202);
  const order = JSON.parse(text) as {
    id: string;
    payment: { id: string };
    nextAction: { url: string };
  };
  return {
    id: order.id,
    key,
    paymentIntentId: order.payment.id,
    challengeUrl: order.nextAction.url,
    body,
    text,
  };
}

/** The shopper's choice on the bank's page, as their browser submits it; the redirect is not followed. */
export async function answerChallenge(
  challengeUrl: string,
  authentication: "complete" | "fail",
): Promise<Response> {
  const url = new URL(challengeUrl);
  return fetch(`${url.origin}${url.pathname}`, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      client_secret: url.searchParams.get("client_secret")!,
      authentication,
    }),
    redirect: "manual",
  });
}

/** What the database holds for one order: its status, its payment's, who settled it, its shipments. */
export async function orderState(orderId: string, db: pg.Pool = testDb()) {
  const { rows } = await db.query<{
    status: string;
    payment_status: string;
    settled_by: string | null;
    decline_code: string | null;
    shipments: number;
  }>(
    `SELECT o.status, p.status AS payment_status, p.settled_by, p.decline_code,
            (SELECT count(*)::int FROM shipments s WHERE s.order_id = o.id) AS shipments
       FROM orders o JOIN payments p ON p.order_id = o.id
      WHERE o.id = $1`,
    [orderId],
  );
  return rows[0];
}

/** The events the shop recorded about one payment, oldest first: what each did. */
export async function recordedEvents(paymentIntentId: string, db: pg.Pool = testDb()) {
  const { rows } = await db.query<{ event_id: string; type: string; outcome: string }>(
    `SELECT event_id, type, outcome FROM webhook_events
      WHERE provider_payment_id = $1 ORDER BY received_at, event_id`,
    [paymentIntentId],
  );
  return rows;
}

export async function eventRecorded(eventId: string): Promise<boolean> {
  const { rowCount } = await testDb().query(`SELECT FROM webhook_events WHERE event_id = $1`, [
    eventId,
  ]);
  return rowCount === 1;
}

/** What each delivery about the payment did, in the order received, as the delivery log keeps it. */
export async function loggedDeliveries(paymentIntentId: string): Promise<string[]> {
  const { rows } = await testDb().query<{ outcome: string }>(
    `SELECT outcome FROM webhook_receipts
      WHERE provider_payment_id = $1 ORDER BY received_at, id`,
    [paymentIntentId],
  );
  return rows.map((row) => row.outcome);
}

/** GET /api/orders/{id}/webhooks as the account sees it. */
export async function orderWebhooks(
  token: string,
  orderId: string,
): Promise<{ status: number; json: Record<string, unknown> }> {
  const response = await fetch(`${baseUrl()}/api/orders/${orderId}/webhooks`, {
    headers: { Authorization: `Bearer ${token}` },
  });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}
