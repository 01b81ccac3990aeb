import type { Database } from "@/lib/db/client";
import type { OrderWithDetails } from "@/lib/orders/order-view";

/**
 * Fulfilment checked against payment, per order: a paid order must have
 * shipped exactly once, and any other (pending on the shopper's bank, or
 * failed) not at all. Beside it, the provider's events the shop acted on
 * for the order's payment, each with what it did, and who settled the
 * payment when it was not the checkout's own answer. All of it from our
 * tables: shipments and events are the shop's own facts.
 */
export interface FulfilmentEvent {
  eventId: string;
  type: string;
  outcome: string;
  receivedAt: string;
}

export interface OrderFulfilment {
  shipments: number;
  /** What the order's status asks for: 1 when paid, else 0. */
  expectedShipments: 0 | 1;
  /** Who moved a pending payment (webhook, recovery); null when the checkout's answer settled it. */
  settledBy: string | null;
  events: FulfilmentEvent[];
}

export async function checkFulfilment(
  db: Database,
  orders: readonly OrderWithDetails[],
): Promise<Map<string, OrderFulfilment>> {
  if (orders.length === 0) return new Map();
  const paymentIds = orders.flatMap((order) =>
    order.payment ? [order.payment.providerPaymentId] : [],
  );
  const [shipments, events] = await Promise.all([
    db.shipment.groupBy({
      by: ["orderId"],
      where: { orderId: { in: orders.map((order) => order.id) } },
      _count: { _all: true },
    }),
    db.webhookEvent.findMany({
      where: { providerPaymentId: { in: paymentIds } },
      orderBy: [{ receivedAt: "asc" }, { eventId: "asc" }],
    }),
  ]);
  const shipped = new Map(shipments.map((row) => [row.orderId, row._count._all]));
  return new Map(
    orders.map((order) => [
      order.id,
      {
        shipments: shipped.get(order.id) ?? 0,
        expectedShipments: order.status === "paid" ? 1 : 0,
        settledBy: order.payment?.settledBy ?? null,
        events: events
          .filter((event) => event.providerPaymentId === order.payment?.providerPaymentId)
          .map((event) => ({
            eventId: event.eventId,
            type: event.type,
            outcome: event.outcome,
            receivedAt: event.receivedAt.toISOString(),
          })),
      },
    ]),
  );
}
