/**
 * The provider's side of a payment, as the checkout page shows it: every
 * delivery of its events the shop received and what each did
 * (GET /api/orders/{id}/webhooks), and, in the "Duplicate webhooks" demo,
 * asking the provider to deliver them again (POST /api/demo/webhook-redeliveries).
 */
import type { WebhookRedelivery } from "@/lib/demo/webhook-redelivery";
import type { OrderWebhooks } from "@/lib/webhooks/delivery-log";
import { toProblem } from "./api-types";

export type { OrderWebhooks };
export type Delivery = OrderWebhooks["deliveries"][number];

type Fetch = (url: string, init: RequestInit) => Promise<Response>;
const defaultFetch: Fetch = (url, init) => globalThis.fetch(url, init);

export async function fetchOrderWebhooks(
  orderId: string,
  fetch: Fetch = defaultFetch,
): Promise<OrderWebhooks | null> {
  try {
    const response = await fetch(`/api/orders/${encodeURIComponent(orderId)}/webhooks`, {
      credentials: "same-origin",
      cache: "no-store",
    });
    if (!response.ok) return null;
    const json: unknown = await response.json();
    return isOrderWebhooks(json) ? json : null;
  } catch {
    return null;
  }
}

export type RedeliveryResult =
  { ok: true; redelivery: WebhookRedelivery } | { ok: false; reason: string };

export async function redeliverWebhooks(
  orderId: string,
  fetch: Fetch = defaultFetch,
): Promise<RedeliveryResult> {
  try {
    const response = await fetch("/api/demo/webhook-redeliveries", {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ orderId }),
    });
    const json: unknown = await response.json().catch(() => null);
    if (response.ok && isRedelivery(json)) return { ok: true, redelivery: json };
    return { ok: false, reason: toProblem(json, response.status, response.statusText).detail };
  } catch {
    return { ok: false, reason: "Could not reach the server." };
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null;
}

function isOrderWebhooks(value: unknown): value is OrderWebhooks {
  return (
    isRecord(value) &&
    typeof value.shipments === "number" &&
    Array.isArray(value.deliveries) &&
    value.deliveries.every(
      (delivery) =>
        isRecord(delivery) &&
        typeof delivery.eventId === "string" &&
        typeof delivery.type === "string" &&
        typeof delivery.outcome === "string" &&
        typeof delivery.receivedAt === "string",
    )
  );
}

function isRedelivery(value: unknown): value is WebhookRedelivery {
  return isRecord(value) && Array.isArray(value.events) && typeof value.copiesPerEvent === "number";
}

/** What one delivery did, in a few words. */
export function describeDelivery(outcome: string): { label: string; changed: boolean } {
  switch (outcome) {
    case "paid":
      return { label: "settled it: paid, shipped once", changed: true };
    case "failed":
      return { label: "settled it: failed, nothing shipped", changed: true };
    case "duplicate":
      return { label: "duplicate: already acted on, changed nothing", changed: false };
    case "unchanged":
      return { label: "the checkout's answer had settled it: changed nothing", changed: false };
    case "stale":
      return { label: "older than the payment's state: changed nothing", changed: false };
    case "not_recorded_yet":
      return { label: "refused (503): the payment was not recorded yet", changed: false };
    default:
      return { label: `${outcome}: changed nothing`, changed: false };
  }
}

/**
 * How long to keep looking for deliveries: while they keep coming, and for
 * a few quiet looks after the last one (late copies come a second or two
 * after the burst). Progress decides, not a clock.
 */
export const QUIET_LOOKS_BEFORE_STOPPING = 6;
export const LOOK_INTERVAL_MS = 1_000;

export function keepWatching(quietLooks: number): boolean {
  return quietLooks < QUIET_LOOKS_BEFORE_STOPPING;
}

export interface DeliverySummary {
  deliveries: number;
  events: number;
  /** Deliveries that changed the order: exactly one for a settled 3-D Secure payment. */
  changes: number;
  shipments: number;
}

export function summarizeDeliveries(webhooks: OrderWebhooks): DeliverySummary {
  return {
    deliveries: webhooks.deliveries.length,
    events: new Set(webhooks.deliveries.map((delivery) => delivery.eventId)).size,
    changes: webhooks.deliveries.filter((delivery) => describeDelivery(delivery.outcome).changed)
      .length,
    shipments: webhooks.shipments,
  };
}

/** Seconds after the first delivery, as the timeline labels each one. */
export function offsetSeconds(delivery: Delivery, first: Delivery): string {
  const ms = Date.parse(delivery.receivedAt) - Date.parse(first.receivedAt);
  return `+${(ms / 1000).toFixed(1)} s`;
}
