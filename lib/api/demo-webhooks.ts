import { readJsonBody } from "@oncepay/idempotency/request";
import { parseWith } from "@/lib/http/field-errors";
import { authenticate, authFailureResponse } from "@/lib/auth/accounts";
import { orderNotFoundResponse } from "@/lib/api/order-not-found";
import { demoFaultsDisabledResponse, demoFaultsEnabled } from "@/lib/demo/settings";
import {
  redeliverEventsOf,
  webhookRedeliveryRequestSchema,
  type WebhookRedelivery,
} from "@/lib/demo/webhook-redelivery";
import { serverEnv } from "@/lib/env";
import { jsonResponse } from "@/lib/http/json";
import { problemResponse, problemType } from "@/lib/http/problem";
import { requestProblemResponse } from "@/lib/http/request-problems";
import { getServices } from "@/lib/services";

/**
 * POST /api/demo/webhook-redeliveries {orderId}: the "Duplicate webhooks"
 * demo. The payment simulator delivers each event of the order's payment
 * again, many copies at once and some late; GET /api/orders/{id}/webhooks
 * then shows what each did. Only with DEMO_FAULTS=on, for the caller's own
 * orders, and only where the app runs on the local simulator.
 */
export async function postWebhookRedelivery(request: Request): Promise<Response> {
  const { authenticator, db } = getServices();
  const auth = await authenticate(authenticator, request);
  if (!auth.ok) return authFailureResponse(auth.failure);
  if (!demoFaultsEnabled())
    return demoFaultsDisabledResponse(
      "This server was started without DEMO_FAULTS=on, so the provider cannot be asked to deliver events again.",
    );
  const read = await readJsonBody(request);
  if (!read.ok) return requestProblemResponse(read.reason, read.detail);
  const parsed = parseWith(webhookRedeliveryRequestSchema, read.json);
  if (!parsed.ok) return requestProblemResponse("invalid-body", parsed.detail, parsed.errors);

  const { orderId } = parsed.value;
  const order = await db.order.findFirst({
    where: { id: orderId, accountId: auth.caller.accountId },
    select: { payment: { select: { providerPaymentId: true } } },
  });
  if (!order) return orderNotFoundResponse(orderId);
  const env = serverEnv();
  if (!env.PAYMENT_SIMULATOR_URL || !env.SIMULATOR_ADMIN_KEY || !order.payment)
    return problemResponse({
      type: problemType("redelivery-unavailable"),
      title: "Events cannot be delivered again from here",
      status: 409,
      detail: order.payment
        ? "This server does not run on the local payment simulator with its admin key (npm start with demo faults gives it both), so it cannot ask the provider to deliver events again."
        : `Order ${orderId} has no payment, so it has no events.`,
    });

  const redelivery = await redeliverEventsOf(
    { url: env.PAYMENT_SIMULATOR_URL, adminKey: env.SIMULATOR_ADMIN_KEY },
    order.payment.providerPaymentId,
  );
  const body: WebhookRedelivery = { object: "webhook_redelivery", orderId, ...redelivery };
  return jsonResponse(200, body, { "Cache-Control": "no-store" });
}
