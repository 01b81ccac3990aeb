import { randomUUID } from "node:crypto";
import { authenticate } from "@/lib/auth/accounts";
import { demoFaultsDisabledResponse, demoFaultsEnabled, takeLostResponse } from "@/lib/demo/settings";
import { jsonResponse } from "@/lib/http/json";
import { lostResponse } from "@/lib/http/lost-response";
import { readJsonBody } from "@/lib/http/request-body";
import { requestProblemResponse } from "@/lib/http/request-problems";
import { parseCheckoutRequest } from "@/lib/orders/cart";
import { recordDecline, recordPaidOrder } from "@/lib/orders/record";
import { getServices } from "@/lib/services";

/**
 * BROKEN ON PURPOSE: the lab's "no key" strategy, POST /api/lab/unsafe-orders.
 *
 * It charges and writes an order on every request, with no Idempotency-Key
 * and no claim, so a client that retries after a lost response pays twice.
 * It exists to show that failure next to the real endpoint. It shares the
 * pricing, the order writing and the payment provider with the real
 * checkout (the missing key is the only difference) and none of the
 * idempotency layer: nothing here imports lib/idempotency (an ESLint rule
 * enforces it). Like every demo fault, it exists only on a server started
 * with DEMO_FAULTS=on; otherwise it is a 403 and charges nothing.
 */
export async function createUnsafeOrder(request: Request): Promise<Response> {
  const { db, paymentProvider } = getServices();
  const auth = await authenticate(db, request);
  if (!auth.ok) return requestProblemResponse(auth.reason, auth.detail);
  if (!demoFaultsEnabled()) {
    return demoFaultsDisabledResponse("This server was started without DEMO_FAULTS=on, so the lab's keyless checkout is switched off: it would charge twice on purpose.");
  }
  const accountId = auth.caller.accountId;

  const read = await readJsonBody(request);
  if (!read.ok) return requestProblemResponse(read.reason, read.detail);
  const parsed = parseCheckoutRequest(read.json);
  if (!parsed.ok) return requestProblemResponse("invalid-body", parsed.detail, parsed.errors);
  const cart = parsed.body;

  // A fresh provider key per request: nothing tells a retry from a new purchase.
  const charge = await paymentProvider.charge({
    amount: cart.total,
    currency: cart.currency,
    paymentMethod: cart.paymentMethod,
    idempotencyKey: `unsafe:${randomUUID()}`,
  });
  const record = { accountId, keyId: null, cart, charge, provider: paymentProvider.name };
  const result = await db.$transaction((tx) => (charge.status === "succeeded" ? recordPaidOrder(tx, record) : recordDecline(tx, record)));

  if (await takeLostResponse(db, accountId)) return lostResponse();
  return jsonResponse(result.status, result.body, result.headers);
}
