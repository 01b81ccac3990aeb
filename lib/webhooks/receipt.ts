import { z } from "zod";

/** What POST /api/webhooks/stripe answers a delivery it took: what the event did. */
export const webhookReceiptSchema = z.object({
  received: z.literal(true),
  eventId: z.string(),
  outcome: z
    .enum(["paid", "failed", "unchanged", "stale", "duplicate", "noted", "not_ours", "ignored"])
    .describe(
      "paid or failed: it settled a pending payment and its order; unchanged: the payment was already where the event says; stale: the payment had already ended otherwise; duplicate: this event was acted on before; noted: a refund the shop already records; not_ours: not one of the shop's payments; ignored: a type the shop does not act on.",
    ),
});
export type WebhookReceipt = z.infer<typeof webhookReceiptSchema>;

/** A Stripe event as the endpoint reads it: the fields it uses, the rest passed by. */
export const stripeEventSchema = z.looseObject({
  id: z.string().describe("The event's id (evt_…): what makes a duplicate a duplicate."),
  object: z.literal("event"),
  type: z.string(),
  created: z.number().int(),
  data: z.looseObject({ object: z.looseObject({ id: z.string() }) }),
});
