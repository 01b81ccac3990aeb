import { authenticate } from "@/lib/auth/accounts";
import { requestedFault } from "@/lib/faults";
import { jsonResponse } from "@/lib/http/json";
import { problemResponse, problemType } from "@/lib/http/problem";
import { runIdempotent } from "@/lib/idempotency/idempotent-endpoint";
import { outcomeToResponse } from "@/lib/idempotency/outcomes";
import { checkoutEndpoint } from "@/lib/orders/checkout";
import { orderView } from "@/lib/orders/order-view";
import { getServices } from "@/lib/services";

/** POST /api/orders: identity first (401 before the key is looked at), then the idempotent checkout. */
export async function createOrder(request: Request): Promise<Response> {
  const { db, idempotencyStore, paymentProvider } = getServices();
  const auth = await authenticate(db, request);
  if (!auth.ok) return outcomeToResponse({ kind: "unauthenticated", detail: auth.detail });

  const endpoint = checkoutEndpoint({ store: idempotencyStore, provider: paymentProvider, fault: requestedFault(request) });
  return outcomeToResponse(await runIdempotent(endpoint, request, auth.caller.accountId));
}

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** GET /api/orders/{id}: the owner sees the order; anyone else learns nothing, not even that it exists. */
export async function getOrder(request: Request, orderId: string): Promise<Response> {
  const { db } = getServices();
  const auth = await authenticate(db, request);
  if (!auth.ok) return outcomeToResponse({ kind: "unauthenticated", detail: auth.detail });

  const order = UUID_PATTERN.test(orderId)
    ? await db.order.findFirst({ where: { id: orderId, accountId: auth.caller.accountId }, include: { items: true, payment: true } })
    : null;
  if (!order) {
    return problemResponse({ type: problemType("order-not-found"), title: "Order not found", status: 404, detail: `No order ${orderId} for this account.` });
  }
  return jsonResponse(200, orderView(order));
}
