import type { LabWebhookDesign } from "@/lib/generated/prisma/enums";

export type { LabWebhookDesign };

/**
 * The webhook handlers the lab storms, as data both the server and the
 * browser read. One is OncePay's own; the other is the handler most
 * integrations start with: it checks the signature and acts on every
 * delivery, trusting the provider to deliver each event once and in order.
 */
export interface LabWebhookDesignInfo {
  id: LabWebhookDesign;
  name: string;
  kind: "broken" | "real";
  /** Where the storm's deliveries go. */
  endpoint: string;
  how: string;
}

export const LAB_WEBHOOK_DESIGN_INFO: Record<LabWebhookDesign, LabWebhookDesignInfo> = {
  no_event_record: {
    id: "no_event_record",
    name: "No event record",
    kind: "broken",
    endpoint: "/api/lab/webhooks/no-event-record",
    how: "Verifies the signature, then does what each delivery says: marks the order paid and ships it on a success, marks it failed on a failure. Nothing remembers an event it has acted on.",
  },
  event_record: {
    id: "event_record",
    name: "Event record (OncePay)",
    kind: "real",
    endpoint: "/api/lab/webhooks/event-record",
    how: "The shop's own handler (the code of POST /api/webhooks/stripe): records the event's id in the transaction of its change, and moves only a pending payment, under its row lock.",
  },
};

/** Broken first, as the strategy lab orders its designs. */
export const LAB_WEBHOOK_DESIGNS = Object.keys(LAB_WEBHOOK_DESIGN_INFO) as LabWebhookDesign[];

export function isLabWebhookDesign(value: unknown): value is LabWebhookDesign {
  return typeof value === "string" && (LAB_WEBHOOK_DESIGNS as string[]).includes(value);
}

/**
 * The storm, for `size`: the success event `size` times at once; then,
 * once those are answered, a quarter as many late copies of it, mixed with
 * as many copies of an older failure of the same payment (a first attempt's,
 * as the provider sends when a retried payment then succeeds).
 */
export function stormWaves(size: number): { succeeded: number; failed: number }[] {
  const late = Math.ceil(size / 4);
  return [
    { succeeded: size, failed: 0 },
    { succeeded: late, failed: late },
  ];
}

export interface WebhookStormCounts {
  design: LabWebhookDesign;
  /** Shipments of the storm's one order. */
  shipments: number;
  /** The order's status after the storm: paid is the provider's last word. */
  status: string;
  deliveries: number;
}

export interface WebhookStormVerdict {
  /** Null while nothing has been delivered: the order still waits, untouched. */
  outcome: "broke" | "held" | "lucky" | null;
  sentence: string;
}

/** Why a handler broke or held, from what the storm left: one paid order must ship exactly once. */
export function explainWebhookStorm({
  design,
  shipments,
  status,
  deliveries,
}: WebhookStormCounts): WebhookStormVerdict {
  if (status === "pending" && shipments === 0)
    return { outcome: null, sentence: "Nothing delivered yet: the order waits for its events." };
  const once = shipments === 1 && status === "paid";
  const times = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
  if (design === "event_record") {
    return once
      ? {
          outcome: "held",
          sentence: `Of ${times(deliveries, "delivery", "deliveries")}, the first of the success settled the order and shipped it; every copy found its event recorded, and the older failure found the payment already succeeded: one shipment, order paid.`,
        }
      : {
          outcome: "broke",
          sentence: `Expected one shipment of a paid order, but the order is ${status} with ${times(shipments, "shipment")}. This is a bug.`,
        };
  }
  if (once)
    return {
      outcome: "lucky",
      sentence: "One shipment of a paid order this time: nothing in the handler made it so.",
    };
  const wrongStatus = status !== "paid";
  return {
    outcome: "broke",
    sentence: `Each delivery of the success shipped again: ${times(shipments, "shipment")} of one order${
      wrongStatus
        ? `, and a late copy of the older failure marked it ${status} though the payment succeeded`
        : ""
    }.`,
  };
}
