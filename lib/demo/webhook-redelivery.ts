import { z } from "zod";

/**
 * The "Duplicate webhooks" demo, at the provider's end: the payment
 * simulator's admin API delivers each of a payment's events again, as
 * Stripe does when it retries: a burst of copies at once, then copies that
 * come late, after the order has long moved on. Only the simulator can do
 * this; Stripe itself is asked through its Dashboard or CLI instead.
 */
export const REDELIVERY_PLAN = [
  { copies: 10, delayMs: 0 },
  { copies: 3, delayMs: 1_500 },
] as const;

export const COPIES_PER_EVENT = REDELIVERY_PLAN.reduce((sum, wave) => sum + wave.copies, 0);

export const webhookRedeliveryRequestSchema = z.object({
  orderId: z.uuid("orderId must be one of this account's order ids"),
});

export const webhookRedeliverySchema = z.object({
  object: z.literal("webhook_redelivery"),
  orderId: z.uuid(),
  events: z
    .array(z.object({ id: z.string(), type: z.string() }))
    .describe("The payment's events the provider delivers again."),
  copiesPerEvent: z
    .number()
    .int()
    .describe("How many copies of each: ten at once, then three 1.5 s later."),
});
export type WebhookRedelivery = z.infer<typeof webhookRedeliverySchema>;

const eventListSchema = z.object({
  data: z.array(z.object({ id: z.string(), type: z.string() })),
});

export interface SimulatorAdmin {
  url: string;
  adminKey: string;
}

export interface Redelivery {
  /** The events asked for again, newest first, as the simulator lists them. */
  events: { id: string; type: string }[];
  copiesPerEvent: number;
}

export async function redeliverEventsOf(
  simulator: SimulatorAdmin,
  paymentIntentId: string,
): Promise<Redelivery> {
  const call = async (path: string, init?: RequestInit) => {
    const response = await fetch(new URL(path, simulator.url), {
      ...init,
      headers: {
        Authorization: `Bearer ${simulator.adminKey}`,
        "Content-Type": "application/json",
      },
      signal: AbortSignal.timeout(10_000),
    });
    if (!response.ok)
      throw new Error(`The payment simulator answered ${response.status} to ${path}`);
    return response.json() as Promise<unknown>;
  };
  const { data: events } = eventListSchema.parse(
    await call(`/_simulator/events?payment_intent=${encodeURIComponent(paymentIntentId)}`),
  );
  for (const event of events)
    for (const wave of REDELIVERY_PLAN)
      await call(`/_simulator/events/${encodeURIComponent(event.id)}/redeliver`, {
        method: "POST",
        body: JSON.stringify(wave),
      });
  return {
    events: events.map(({ id, type }) => ({ id, type })),
    copiesPerEvent: COPIES_PER_EVENT,
  };
}
