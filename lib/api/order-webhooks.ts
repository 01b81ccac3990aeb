import { authenticate, authFailureResponse } from "@/lib/auth/accounts";
import { orderNotFoundResponse } from "@/lib/api/order-not-found";
import { isUuid } from "@/lib/http/uuid";
import { jsonResponse } from "@/lib/http/json";
import { getServices } from "@/lib/services";
import { deliveriesOf, type OrderWebhooks } from "@/lib/webhooks/delivery-log";

const PRIVATE = { "Cache-Control": "private, no-store" };

/**
 * GET /api/orders/{id}/webhooks: every delivery of the provider's events
 * about one of this account's orders, with what each did, and the order's
 * shipments. The checkout's demos draw their webhook timeline from it.
 */
export async function getOrderWebhooks(request: Request, orderId: string): Promise<Response> {
  const { authenticator, db } = getServices();
  const auth = await authenticate(authenticator, request);
  if (!auth.ok) return authFailureResponse(auth.failure);

  const order = isUuid(orderId)
    ? await db.order.findFirst({
        where: { id: orderId, accountId: auth.caller.accountId },
        select: { id: true, payment: { select: { providerPaymentId: true } } },
      })
    : null;
  if (!order) return orderNotFoundResponse(orderId, PRIVATE);
  const [deliveries, shipments] = await Promise.all([
    order.payment ? deliveriesOf(db, order.payment.providerPaymentId) : [],
    db.shipment.count({ where: { orderId: order.id } }),
  ]);
  const body: OrderWebhooks = {
    object: "order_webhooks",
    orderId: order.id,
    shipments,
    deliveries,
  };
  return jsonResponse(200, body, PRIVATE);
}
