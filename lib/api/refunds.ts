import { preferredWaitMs } from "@/lib/http/preferred-wait";
import { authenticate } from "@/lib/auth/accounts";
import { readKeyedCall } from "@oncepay/idempotency/fetch";
import { recordPresentedKey } from "@/lib/api/presented-key";
import { requestedFault, injectFault } from "@/lib/faults";
import { parseWith } from "@/lib/http/field-errors";
import { problemResponse, problemType } from "@/lib/http/problem";
import { isUuid } from "@/lib/http/uuid";
import { keyRequestAnswerOf, type KeyRequestAnswerOf } from "@/lib/idempotency/key-requests";
import { outcomeOfThrown, outcomeToResponse, type Outcome } from "@/lib/idempotency/outcomes";
import { addToContext } from "@/lib/observability/request-context";
import { refundBodySchema } from "@/lib/refunds/refund-request";
import { getServices } from "@/lib/services";

/**
 * POST /api/orders/{id}/refunds: refunds all or part of one of the caller's
 * orders, once per Idempotency-Key, and never more than was charged, however
 * many refunds of it are in flight (lib/refunds/refund.ts). Recorded under
 * its key, as a checkout is, for the key's page.
 */
export async function createRefund(request: Request, orderId: string): Promise<Response> {
  const startedAt = performance.now();
  const { authenticator, keyRequests } = getServices();
  let accountId: string | undefined;
  const record = (answered: KeyRequestAnswerOf | undefined) => {
    if (accountId) recordPresentedKey(keyRequests, request, accountId, answered, startedAt);
  };
  try {
    const auth = await authenticate(authenticator, request);
    if (!auth.ok) return outcomeToResponse(auth.failure);
    accountId = auth.caller.accountId;
    const outcome = await refund(request, accountId, orderId);
    if (outcome === undefined) return orderNotFound(orderId);
    record(keyRequestAnswerOf(outcome));
    return outcomeToResponse(outcome);
  } catch (error) {
    // The route wrapper answers it (503 or 500).
    record(keyRequestAnswerOf(outcomeOfThrown(error)));
    throw error;
  }
}

/** The refund's outcome; undefined for a path that names no order at all. */
async function refund(
  request: Request,
  accountId: string,
  orderId: string,
): Promise<Outcome | undefined> {
  const read = await readKeyedCall(request, accountId);
  if (!read.ok) return read.problem;
  addToContext({ idempotencyKey: read.call.key });
  if (!isUuid(orderId)) return undefined;
  const body = parseWith(refundBodySchema, read.call.body);
  if (!body.ok) return { kind: "invalid-body", detail: body.detail, errors: body.errors };
  const fault = requestedFault(request);
  // The order is the path's: it joins the body in the request the key stands for.
  const outcome = await getServices().engine.refund(
    { ...read.call, body: { orderId, ...body.value } },
    { fault, waitMs: preferredWaitMs(request) },
  );
  if (outcome.kind === "completed") injectFault(fault, "after-commit");
  return outcome;
}

function orderNotFound(orderId: string): Response {
  return problemResponse(
    {
      type: problemType("order-not-found"),
      title: "Order not found",
      status: 404,
      detail: `No order ${orderId} for this account: nothing was refunded.`,
    },
    { "Cache-Control": "private, no-store" },
  );
}
