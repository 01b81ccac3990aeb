import type pg from "pg";
import { z } from "zod";
import type { Database } from "@/lib/db/client";
import type { Transaction } from "@/lib/db/transaction";
import type { EventOutcome } from "@/lib/webhooks/receive";
import type { ProviderEvent } from "@/lib/webhooks/stripe-event";

/**
 * The log of deliveries: one row per verified delivery of an event, with
 * what that delivery did. The event record (webhook_events) says an event
 * was acted on; this says how often the provider knocked, and what each
 * knock found: the one that acted, the duplicates, the copies refused while
 * the payment's own commit was on its way. A forged or malformed delivery
 * has no trustworthy event id, so it is logged only by the server's log.
 */
export type DeliveryOutcome = EventOutcome | "not_recorded_yet";

/** Within the delivery's transaction: it is logged if and only if what it did is committed. */
export async function logDelivery(
  db: Transaction | pg.Pool,
  event: ProviderEvent,
  outcome: DeliveryOutcome,
): Promise<void> {
  await db.query(
    `INSERT INTO webhook_receipts (event_id, type, provider_payment_id, outcome)
     VALUES ($1, $2, $3, $4)`,
    [event.id, event.type, paymentIntentOf(event), outcome],
  );
}

export function paymentIntentOf(event: ProviderEvent): string | null {
  return "paymentIntentId" in event ? event.paymentIntentId : null;
}

/** GET /api/orders/{id}/webhooks: what the provider delivered about the order's payment, and what shipped. */
export const orderWebhooksSchema = z.object({
  object: z.literal("order_webhooks"),
  orderId: z.uuid(),
  shipments: z
    .number()
    .int()
    .describe("Shipments of the order: 1 once it is paid, however many deliveries came."),
  deliveries: z
    .array(
      z.object({
        eventId: z.string(),
        type: z.string(),
        outcome: z
          .string()
          .describe(
            "What this delivery did: an outcome of WebhookReceipt (paid, duplicate, …), or not_recorded_yet (refused with 503: the checkout's own commit was still on its way).",
          ),
        receivedAt: z.iso.datetime(),
      }),
    )
    .describe("Every verified delivery about the order's payment, oldest first."),
});
export type OrderWebhooks = z.infer<typeof orderWebhooksSchema>;
export type Delivery = OrderWebhooks["deliveries"][number];

/** Every delivery about one payment, in the order they were received. */
export async function deliveriesOf(db: Database, providerPaymentId: string): Promise<Delivery[]> {
  const rows = await db.webhookReceipt.findMany({
    where: { providerPaymentId },
    orderBy: [{ receivedAt: "asc" }, { id: "asc" }],
  });
  return rows.map((row) => ({
    eventId: row.eventId,
    type: row.type,
    outcome: row.outcome,
    receivedAt: row.receivedAt.toISOString(),
  }));
}
