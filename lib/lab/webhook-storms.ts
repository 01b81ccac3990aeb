import { randomBytes } from "node:crypto";
import type pg from "pg";
import Stripe from "stripe";
import { z } from "zod";
import type { Database } from "@/lib/db/client";
import { run } from "@/lib/db/sql";
import { inTransaction } from "@/lib/db/transaction";
import { LabWebhookDesign } from "@/lib/generated/prisma/enums";
import type { LabWebhookStorm } from "@/lib/generated/prisma/client";
import { STORM_CART } from "@/lib/lab/storms";
import {
  explainWebhookStorm,
  LAB_WEBHOOK_DESIGN_INFO,
  LAB_WEBHOOK_DESIGNS,
  stormWaves,
} from "@/lib/lab/webhook-designs";
import { parseCheckoutRequest } from "@/lib/orders/cart";
import { orderRowsStatement } from "@/lib/orders/order-rows-sql";
import { chargeWrite } from "@/lib/orders/record";

/**
 * A webhook storm: one pending order of the lab's own, then its events
 * delivered the way a provider delivers at least once: the success many
 * times at once, then late copies of it mixed with an older failure of the
 * same payment. The server mints and signs the events (as the provider
 * would, with the endpoint's secret) and says exactly what to send; the
 * browser sends it; the report counts what the handler left: shipments of
 * the order, and its status.
 *
 * The order's payment belongs to the provider 'lab': no provider holds it,
 * so neither the shop's endpoint, nor its recovery worker, nor the ledger's
 * provider check ever meets it.
 */
export const LAB_WEBHOOK_PROVIDER = "lab";
const STORM_PAYMENT_METHOD = "pm_card_authenticationRequired";
/** The older failure happened this long before the success, as a first attempt's would. */
const FAILURE_BEFORE_SUCCESS_SECONDS = 30;

const signedDeliverySchema = z.object({
  eventId: z.string(),
  type: z.string(),
  copies: z.number().int().describe("How many copies of this body to send at once, with the wave."),
  body: z.string().describe("The event, as the exact bytes to send."),
  signature: z.string().describe("Its Stripe-Signature header."),
});

export const webhookStormReportSchema = z.object({
  object: z.literal("lab_webhook_storm"),
  id: z.uuid(),
  design: z.enum(LabWebhookDesign),
  size: z.number().int(),
  createdAt: z.iso.datetime(),
  orderId: z.uuid(),
  paymentIntent: z.string(),
  request: z
    .object({
      endpoint: z.string(),
      waves: z
        .array(z.array(signedDeliverySchema))
        .describe(
          "Send each wave's deliveries all at once; the next wave once every one is answered.",
        ),
    })
    .describe("What to send: null once the signatures are older than the endpoint accepts.")
    .nullable(),
  deliveries: z.number().int().describe("Deliveries in the storm, every wave counted."),
  status: z.string().describe("The order's status now: paid is what the provider said last."),
  shipments: z.number().int().describe("Times the order shipped: one is right."),
  outcome: z
    .enum(["broke", "held", "lucky"])
    .nullable()
    .describe("null until a delivery has changed the order."),
  sentence: z.string(),
});
export type WebhookStormReport = z.infer<typeof webhookStormReportSchema>;
export type SignedDelivery = z.infer<typeof signedDeliverySchema>;

export const newWebhookStormSchema = z.object({
  design: z.enum(LAB_WEBHOOK_DESIGNS, {
    error: `design must be one of: ${LAB_WEBHOOK_DESIGNS.join(", ")}`,
  }),
  size: z.number().int("size must be a whole number"),
});

/** The storm's order (pending, its payment waiting on 3-D Secure) and the storm's row, in one commit. */
export async function createWebhookStorm(
  pool: pg.Pool,
  db: Database,
  accountId: string,
  design: LabWebhookDesign,
  size: number,
): Promise<LabWebhookStorm> {
  const paymentIntent = `pi_lab_${randomBytes(12).toString("hex")}`;
  const cart = parseCheckoutRequest({
    cartId: `cart_lab_webhooks_${randomBytes(8).toString("hex")}`,
    items: STORM_CART.map((item) => ({ ...item })),
    paymentMethod: STORM_PAYMENT_METHOD,
  });
  if (!cart.ok) throw new Error(`The lab's storm cart does not price: ${cart.detail}`);
  const { rows } = chargeWrite({
    accountId,
    keyId: null,
    idempotencyKey: null,
    source: "lab_webhooks",
    providerKey: `lab-webhooks:${paymentIntent}`,
    cart: cart.body,
    charge: {
      status: "requires_action",
      providerPaymentId: paymentIntent,
      redirectUrl: "https://lab.invalid/authenticate",
    },
    provider: LAB_WEBHOOK_PROVIDER,
  });
  if (rows.order === null) throw new Error("A pending charge writes an order");
  const orderId = rows.order.id;
  await inTransaction(pool, async (tx) => {
    await run(tx, orderRowsStatement(rows));
    await tx.query(
      `INSERT INTO lab_webhook_storms (account_id, design, size, order_id, payment_intent)
       VALUES ($1, $2::lab_webhook_design, $3, $4, $5)`,
      [accountId, design, size, orderId, paymentIntent],
    );
  });
  return (await db.labWebhookStorm.findUnique({ where: { orderId } }))!;
}

/** The account's own storm, or undefined: another account's is as absent as one that never was. */
export async function findWebhookStorm(
  db: Database,
  accountId: string,
  stormId: string,
): Promise<LabWebhookStorm | undefined> {
  return (await db.labWebhookStorm.findFirst({ where: { id: stormId, accountId } })) ?? undefined;
}

/** Each design's latest storm, newest first. */
export async function latestWebhookStorms(
  db: Database,
  accountId: string,
): Promise<LabWebhookStorm[]> {
  const latest = await Promise.all(
    LAB_WEBHOOK_DESIGNS.map((design) =>
      db.labWebhookStorm.findFirst({
        where: { accountId, design },
        orderBy: [{ createdAt: "desc" }, { id: "desc" }],
      }),
    ),
  );
  return latest
    .filter((storm) => storm !== null)
    .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime());
}

export async function reportWebhookStorm(
  db: Database,
  storm: LabWebhookStorm,
  request: WebhookStormReport["request"],
): Promise<WebhookStormReport> {
  const [order, shipments, labShipments] = await Promise.all([
    db.order.findUnique({ where: { id: storm.orderId }, select: { status: true } }),
    db.shipment.count({ where: { orderId: storm.orderId } }),
    db.labShipment.count({ where: { orderId: storm.orderId } }),
  ]);
  const status = order?.status ?? "gone";
  const deliveries = stormWaves(storm.size).reduce(
    (sum, wave) => sum + wave.succeeded + wave.failed,
    0,
  );
  const verdict = explainWebhookStorm({
    design: storm.design,
    shipments: shipments + labShipments,
    status,
    deliveries,
  });
  return {
    object: "lab_webhook_storm",
    id: storm.id,
    design: storm.design,
    size: storm.size,
    createdAt: storm.createdAt.toISOString(),
    orderId: storm.orderId,
    paymentIntent: storm.paymentIntent,
    request,
    deliveries,
    status,
    shipments: shipments + labShipments,
    ...verdict,
  };
}

/**
 * The storm's deliveries, signed now with the endpoint's secret: two events
 * of the storm's payment, the success and an older failure, each one body
 * sent as many times as its wave says.
 */
export function signedStormRequest(
  storm: LabWebhookStorm,
  secret: string,
  now = new Date(),
): NonNullable<WebhookStormReport["request"]> {
  const created = Math.floor(now.getTime() / 1000);
  const succeeded = labEvent(storm, "payment_intent.succeeded", created);
  const failed = labEvent(
    storm,
    "payment_intent.payment_failed",
    created - FAILURE_BEFORE_SUCCESS_SECONDS,
  );
  const sign = (event: ReturnType<typeof labEvent>, copies: number): SignedDelivery => {
    const body = JSON.stringify(event);
    return {
      eventId: event.id,
      type: event.type,
      copies,
      body,
      signature: Stripe.webhooks.generateTestHeaderString({
        payload: body,
        secret,
        timestamp: created,
      }),
    };
  };
  return {
    endpoint: LAB_WEBHOOK_DESIGN_INFO[storm.design].endpoint,
    waves: stormWaves(storm.size).map((wave) => [
      ...(wave.failed > 0 ? [sign(failed, wave.failed)] : []),
      sign(succeeded, wave.succeeded),
    ]),
  };
}

/** A Stripe event about the storm's PaymentIntent, with an id derived from the storm (so every wave repeats the same event). */
function labEvent(storm: LabWebhookStorm, type: string, created: number) {
  const succeeded = type === "payment_intent.succeeded";
  const suffix = storm.id.replaceAll("-", "");
  return {
    id: `evt_lab_${succeeded ? "s" : "f"}_${suffix}`,
    object: "event",
    api_version: "2024-04-10",
    created,
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    type,
    data: {
      object: {
        id: storm.paymentIntent,
        object: "payment_intent",
        amount: null,
        currency: "usd",
        status: succeeded ? "succeeded" : "requires_payment_method",
        metadata: {},
        last_payment_error: succeeded
          ? null
          : { code: "payment_intent_authentication_failure", decline_code: null },
      },
    },
  };
}
