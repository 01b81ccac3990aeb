import { z } from "zod";
import { demoSettingsSchema, demoSettingsViewSchema } from "@/lib/demo/settings";
import {
  webhookRedeliveryRequestSchema,
  webhookRedeliverySchema,
} from "@/lib/demo/webhook-redelivery";
import { keyInspectionSchema } from "@/lib/ledger/key-inspection";
import { purchaseViewSchema } from "@/lib/ledger/purchase-view";
import { newLabRunSchema, stormReportSchema } from "@/lib/lab/storms";
import { newWebhookStormSchema, webhookStormReportSchema } from "@/lib/lab/webhook-storms";
import { checkoutRequestSchema } from "@/lib/orders/cart";
import { productSchema } from "@/lib/orders/catalog";
import { orderViewSchema } from "@/lib/orders/order-view";
import { refundBodySchema } from "@/lib/refunds/refund-request";
import { refundViewSchema } from "@/lib/refunds/refund-view";
import { orderWebhooksSchema } from "@/lib/webhooks/delivery-log";
import { stripeEventSchema, webhookReceiptSchema } from "@/lib/webhooks/receipt";

/**
 * The schemas the OpenAPI document names, each the one the code parses a
 * request with or reads a response's type from. Only shapes that no module
 * owns (a list wrapper, the problem body, the operators' probes) are made
 * here. Requests are described as zod reads them (fields with a default
 * may be left out), responses as the server writes them.
 */

const listOf = <Item extends z.ZodType>(item: Item) =>
  z.object({ object: z.literal("list"), data: z.array(item), has_more: z.boolean() });

/** RFC 9457 problem details: the body of every error, extensions allowed. */
export const problemSchema = z.looseObject({
  type: z
    .string()
    .describe("The problem's name: the path of the page that explains it, /problems/<slug>."),
  title: z.string().describe("The same for every instance of the problem."),
  status: z.number().int(),
  detail: z.string().describe("What went wrong with this request, and what to do."),
  errors: z
    .array(z.object({ path: z.string(), message: z.string() }))
    .optional()
    .describe("The fields at fault (invalid-body, invalid-query)."),
  declineCode: z.string().optional().describe("Why the card was declined (payment-declined)."),
  paymentId: z.string().optional().describe("The declined payment's id (payment-declined)."),
});

const checkResultSchema = z.object({ ok: z.boolean(), ms: z.number() });

export const REQUEST_SCHEMAS = {
  CheckoutRequest: checkoutRequestSchema,
  RefundRequest: refundBodySchema,
  DemoSettingsRequest: demoSettingsSchema,
  WebhookRedeliveryRequest: webhookRedeliveryRequestSchema,
  LabRunRequest: newLabRunSchema,
  LabWebhookStormRequest: newWebhookStormSchema,
  StripeEvent: stripeEventSchema,
} as const;

export const RESPONSE_SCHEMAS = {
  Problem: problemSchema,
  Order: orderViewSchema,
  OrderList: listOf(orderViewSchema),
  Refund: refundViewSchema,
  Purchase: purchaseViewSchema,
  Product: productSchema,
  ProductList: listOf(productSchema),
  Account: z.object({
    id: z.uuid(),
    token: z.string().describe("The bearer token: shown once, only its hash is kept."),
  }),
  IdempotencyKey: keyInspectionSchema,
  DemoSettings: demoSettingsViewSchema,
  LabStorm: stormReportSchema,
  LabStormList: listOf(stormReportSchema),
  LabWebhookStorm: webhookStormReportSchema,
  LabWebhookStormList: listOf(webhookStormReportSchema),
  WebhookReceipt: webhookReceiptSchema,
  OrderWebhooks: orderWebhooksSchema,
  WebhookRedelivery: webhookRedeliverySchema,
  Health: z.object({ status: z.literal("ok") }),
  Ready: z.object({
    status: z.literal("ready"),
    checkedAt: z.iso.datetime(),
    checks: z.record(z.string(), checkResultSchema),
  }),
} as const;

export type RequestSchemaName = keyof typeof REQUEST_SCHEMAS;
export type ResponseSchemaName = keyof typeof RESPONSE_SCHEMAS;
