import type { Order, OrderItem, Payment } from "@/lib/generated/prisma/client";
import type { OrderSource } from "@/lib/generated/prisma/enums";

/** An order as the API shows it, in POST /api/orders and GET /api/orders/{id} alike. */
export interface OrderView {
  id: string;
  object: "order";
  status: string;
  /** The Idempotency-Key the order was made under; null when it was made without one (the lab's broken strategy). */
  idempotencyKey: string | null;
  /** `checkout`, or the lab strategy (broken on purpose) that wrote it. */
  source: OrderSource;
  cartId: string;
  currency: string;
  amount: number;
  items: { sku: string; name: string; unitAmount: number; quantity: number; amount: number }[];
  payment: { id: string; status: string; paymentMethod: string } | null;
  createdAt: string;
}

export type OrderWithDetails = Order & { items: OrderItem[]; payment: Payment | null };

/** What the view reads of an order with its items and payment, as Prisma loads them or as the checkout just wrote them. */
export type OrderViewSource = Pick<
  Order,
  "id" | "status" | "idemKey" | "source" | "cartId" | "currency" | "totalAmount" | "createdAt"
> & {
  items: Pick<OrderItem, "sku" | "name" | "unitAmount" | "quantity">[];
  payment: Pick<Payment, "providerPaymentId" | "status" | "paymentMethod"> | null;
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
        }
      : null,
    createdAt: order.createdAt.toISOString(),
  };
}

export function orderLocation(orderId: string): string {
  return `/api/orders/${orderId}`;
}
