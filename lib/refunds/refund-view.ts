import { z } from "zod";

/**
 * A refund as the API shows it, in POST /api/orders/{id}/refunds. A schema:
 * the OpenAPI document is made from it (lib/openapi).
 */
export const refundViewSchema = z.object({
  id: z.uuid(),
  object: z.literal("refund"),
  orderId: z.uuid(),
  status: z
    .literal("succeeded")
    .describe("A refund is answered once the payment provider has made it."),
  amount: z.number().int().describe("In the currency's minor unit (cents)."),
  currency: z.string(),
  providerRefundId: z.string().describe("The payment provider's id of the refund."),
  createdAt: z.iso.datetime(),
});
export type RefundView = z.infer<typeof refundViewSchema>;
