import type { Order, OrderItem, Payment } from "@/lib/generated/prisma/client";
import { z } from "zod";
import { OrderSource, OrderStatus, PaymentStatus } from "@/lib/generated/prisma/enums";

/**
 * An order as the API shows it, in POST /api/orders and GET /api/orders/{id}
 * alike. A schema rather than an interface: the OpenAPI document is made
 * from it (lib/openapi), and the type is read from it, so the two cannot differ.
 */
export const orderViewSchema = z.object({
  id: z.uuid(),
  object: z.literal("order"),
  status: z
    .enum(OrderStatus)
    .describe(
      "paid; pending while the card's bank waits for the shopper (3-D Secure); failed when that payment did not go through.",
    ),
  idempotencyKey: z
    .string()
    .nullable()
    .describe(
      "The Idempotency-Key the order was made under; null when it was made without one (the lab's broken strategy).",
    ),
  source: z
    .enum(OrderSource)
    .describe("`checkout`, or the lab strategy (broken on purpose) that wrote it."),
  cartId: z.string(),
  currency: z.string(),
  amount: z.number().int().describe("The total, in the currency's minor unit (cents)."),
  items: z.array(
    z.object({
      sku: z.string(),
      name: z.string(),
      unitAmount: z.number().int(),
      quantity: z.number().int(),
      amount: z.number().int(),
    }),
  ),
  payment: z
    .object({
      id: z.string().describe("The payment provider's id of the payment."),
      status: z.enum(PaymentStatus),
      paymentMethod: z.string(),
      refundedAmount: z
        .number()
        .int()
        .describe(
          "How much of it is refunded or being refunded, in minor units: at most the order's amount.",
        ),
    })
    .nullable(),
  createdAt: z.iso.datetime(),
  nextAction: z
    .object({
      type: z.literal("redirect"),
      url: z.url().describe("The bank's 3-D Secure page: send the shopper there."),
    })
    .optional()
    .describe(
      "Only in the checkout's 202 for a pending order: where the shopper authenticates. They come back to the shop's page, and the order then says how it ended.",
    ),
});
export type OrderView = z.infer<typeof orderViewSchema>;

export type OrderWithDetails = Order & { items: OrderItem[]; payment: Payment | null };

/** What the view reads of an order with its items and payment, as Prisma loads them or as the checkout just wrote them. */
export type OrderViewSource = Pick<
  Order,
  "id" | "status" | "idemKey" | "source" | "cartId" | "currency" | "totalAmount" | "createdAt"
> & {
  items: Pick<OrderItem, "sku" | "name" | "unitAmount" | "quantity">[];
  /** A payment just written has no refunds yet: `refundedAmount` is 0 then. */
  payment:
    | (Pick<Payment, "providerPaymentId" | "status" | "paymentMethod"> &
        Partial<Pick<Payment, "refundedAmount">>)
    | null;
};

export function orderView(order: OrderViewSource): OrderView {
  return {
    id: order.id,
    object: "order",
    status: order.status,
    idempotencyKey: order.idemKey,
    source: order.source,
    cartId: order.cartId,
    currency: order.currency,
    amount: order.totalAmount,
    items: [...order.items]
      .sort((a, b) => a.sku.localeCompare(b.sku))
      .map((item) => ({
        sku: item.sku,
        name: item.name,
        unitAmount: item.unitAmount,
        quantity: item.quantity,
        amount: item.unitAmount * item.quantity,
      })),
    payment: order.payment
      ? {
          id: order.payment.providerPaymentId,
          status: order.payment.status,
          paymentMethod: order.payment.paymentMethod,
          refundedAmount: order.payment.refundedAmount ?? 0,
        }
      : null,
    createdAt: order.createdAt.toISOString(),
  };
}

export function orderLocation(orderId: string): string {
  return `/api/orders/${orderId}`;
}
