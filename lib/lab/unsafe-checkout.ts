import { randomUUID } from "node:crypto";
import { authenticate } from "@/lib/auth/accounts";
import { takeLostResponse } from "@/lib/demo/settings";
import { lostResponse } from "@/lib/http/lost-response";
import { readJsonBody } from "@/lib/http/request-body";
import { outcomeToResponse } from "@/lib/idempotency/outcomes";
import { toHttpResponse } from "@/lib/idempotency/stored-response";
import { parseCheckoutRequest } from "@/lib/orders/cart";
import { recordDecline, recordPaidOrder } from "@/lib/orders/record";
import { getServices } from "@/lib/services";

/**
 * BROKEN ON PURPOSE: the lab's "no key" strategy, POST /api/lab/unsafe-orders.
 *
 * It charges and writes an order on every request, with no Idempotency-Key
 * and no claim, so a client that retries after a lost response pays twice.
 * It exists to show that failure next to the real endpoint, and shares none
 * of the real endpoint's idempotency code path.
 */
export async function createUnsafeOrder(request: Request): Promise<Response> {
  const { db, paymentProvider } = getServices();
  const auth = await authenticate(db, request);
  if (!auth.ok) return outcomeToResponse({ kind: "unauthenticated", detail: auth.detail });
  const accountId = auth.caller.accountId;

  const read = await readJsonBody(request);
  if (!read.ok) return outcomeToResponse({ kind: read.reason, detail: read.detail });
  const parsed = parseCheckoutRequest(read.json);
  if (!parsed.ok) return outcomeToResponse({ kind: "invalid-body", detail: parsed.detail, errors: parsed.errors });
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
  return toHttpResponse(result, { replayed: false });
}
