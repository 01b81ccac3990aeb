import type { Transaction } from "@/lib/db/transaction";
import { stripeJson } from "@/lib/payments/simulator/errors";
import { newId } from "@/lib/payments/simulator/ids";

/**
 * Stripe's events, for the changes a shop must learn of even when it never
 * saw the answer that made them: a payment that succeeded or failed (at
 * once, or later, on the challenge page), a charge refunded. Each event is
 * written in the same transaction as the change it reports, with one
 * delivery row for each of the account's webhook endpoints that takes its
 * type, so there is never a change without its event nor an event without
 * its change; the dispatcher (dispatcher.ts) then posts it at least once.
 */
export const EVENT_TYPES = [
  "payment_intent.succeeded",
  "payment_intent.payment_failed",
  "charge.refunded",
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** The API version the simulator's objects follow (the spec its schema test reads). */
export const SIMULATOR_API_VERSION = "2024-04-10";

/** The API request that caused an event; both null for a change made on the challenge page. */
export interface EventOrigin {
  requestId: string | null;
  idempotencyKey: string | null;
}

export const NO_API_REQUEST: EventOrigin = { requestId: null, idempotencyKey: null };

/**
 * When a new event's first attempt is due: a moment after its change, as
 * Stripe's events come after its answer to the request that made them, so
 * a merchant that records that answer has usually done so by then.
 */
const FIRST_ATTEMPT_DELAY_MS = 250;

export interface NewEvent {
  account: string;
  type: EventType;
  /** The object as it is after the change: `data.object`. */
  object: { id: string };
  /** The PaymentIntent it is about, for the admin view's filter. */
  paymentIntent: string;
  origin: EventOrigin;
}

export async function recordEvent(tx: Transaction, event: NewEvent): Promise<string> {
  const { rows: endpoints } = await tx.query<{ id: string }>(
    `SELECT id FROM payment_simulator.webhook_endpoints
      WHERE account = $1 AND enabled_events && ARRAY[$2, '*']::text[]`,
    [event.account, event.type],
  );
  const id = newId("evt");
  const created = Math.floor(Date.now() / 1000);
  const body = stripeJson({
    id,
    object: "event",
    api_version: SIMULATOR_API_VERSION,
    created,
    data: { object: event.object },
    livemode: false,
    pending_webhooks: endpoints.length,
    request: { id: event.origin.requestId, idempotency_key: event.origin.idempotencyKey },
    type: event.type,
  });
  await tx.query(
    `INSERT INTO payment_simulator.events (id, account, type, payment_intent, body, created)
     VALUES ($1, $2, $3, $4, $5, $6)`,
    [id, event.account, event.type, event.paymentIntent, body, created],
  );
  if (endpoints.length > 0) {
    await tx.query(
      `INSERT INTO payment_simulator.webhook_deliveries (event, endpoint, next_attempt_at)
       SELECT $1, unnest($2::text[]), clock_timestamp() + make_interval(secs => $3::float8 / 1000)`,
      [id, endpoints.map((endpoint) => endpoint.id), FIRST_ATTEMPT_DELAY_MS],
    );
  }
  return id;
}
