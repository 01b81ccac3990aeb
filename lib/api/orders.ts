import { preferredWaitMs } from "@/lib/http/preferred-wait";
import { authenticate, authFailureResponse } from "@/lib/auth/accounts";
import { orderNotFoundResponse } from "@/lib/api/order-not-found";
import { demoSettingsFor, takeLostResponse, type DemoSettings } from "@/lib/demo/settings";
import { injectFault, requestedFault } from "@/lib/faults";
import { lostResponse } from "@/lib/http/lost-response";
import { jsonResponse } from "@/lib/http/json";
import { invalidQuery, parseListParams } from "@/lib/http/list-params";
import { isUuid } from "@/lib/http/uuid";
import { readKeyedCall } from "@oncepay/idempotency/fetch";
import { keyRequestAnswerOf, type KeyRequestAnswerOf } from "@/lib/idempotency/key-requests";
import { recordPresentedKey } from "@/lib/api/presented-key";
import { outcomeOfThrown, outcomeToResponse, type Outcome } from "@/lib/idempotency/outcomes";
import { ordersPage } from "@/lib/ledger/orders";
import { checkoutOutcomeOf } from "@/lib/observability/checkout-outcomes";
import { observeCheckout } from "@/lib/observability/metrics";
import { addToContext } from "@/lib/observability/request-context";
import { orderView } from "@/lib/orders/order-view";
import { getServices } from "@/lib/services";

/** Every answer with account data: for this caller only, and kept by no cache. */
const PRIVATE = { "Cache-Control": "private, no-store" };

/**
 * POST /api/orders, counted and timed by outcome
 * (oncepay_checkout_outcomes_total), and recorded under its key, if it
 * presented one of the caller's, once its answer is known
 * (lib/idempotency/key-requests.ts).
 */
export async function createOrder(request: Request): Promise<Response> {
  const startedAt = performance.now();
  const seconds = () => (performance.now() - startedAt) / 1000;
  const { authenticator, keyRequests } = getServices();
  let accountId: string | undefined;
  const record = (answered: KeyRequestAnswerOf | undefined) => {
    if (accountId) recordPresentedKey(keyRequests, request, accountId, answered, startedAt);
  };
  try {
    // Identity first: 401 before the key is looked at.
    const auth = await authenticate(authenticator, request);
    if (!auth.ok) {
      observeCheckout(checkoutOutcomeOf(auth.failure), seconds());
      return outcomeToResponse(auth.failure);
    }
    accountId = auth.caller.accountId;
    const { outcome, response, answerLost } = await checkout(request, accountId);
    observeCheckout(checkoutOutcomeOf(outcome), seconds());
    record(keyRequestAnswerOf(outcome, { answerLost }));
    return response;
  } catch (error) {
    // The route wrapper answers these (503 or 500); they count all the same.
    const thrown = outcomeOfThrown(error);
    observeCheckout(checkoutOutcomeOf(thrown), seconds());
    record(keyRequestAnswerOf(thrown));
    throw error;
  }
}

/**
 * The idempotent checkout, for an authenticated caller. A request the key's
 * row answers (a replay, a 409, a 422) costs one statement; one that claims
 * a new key is counted by the account's rate limit (a 429 releases the
 * claim at once, so nothing stays stored under the key and the same key
 * works once the window has room).
 */
async function checkout(
  request: Request,
  accountId: string,
): Promise<{ outcome: Outcome; response: Response; answerLost: boolean }> {
  const { db, statements, engine } = getServices();
  const read = await readKeyedCall(request, accountId);
  if (!read.ok)
    return { outcome: read.problem, response: outcomeToResponse(read.problem), answerLost: false };
  addToContext({ idempotencyKey: read.call.key });
  // The demo settings shape a checkout that charges: read once, if at all.
  let demoRead: Promise<DemoSettings> | undefined;
  const demoSettings = () => (demoRead ??= demoSettingsFor(statements, accountId));
  const fault = requestedFault(request);
  const outcome = await engine.checkout(read.call, {
    fault,
    holdBeforeChargeMs: async () => (await demoSettings()).networkDelayMs,
    waitMs: preferredWaitMs(request),
  });
  if (outcome.kind === "completed") injectFault(fault, "after-commit");
  // The lost-response demo: the order is committed, the answer never arrives,
  // and only a retry with the same key (a replay) tells the client the result.
  if (
    outcome.kind === "completed" &&
    (await demoSettings()).loseResponse &&
    (await takeLostResponse(db, accountId))
  ) {
    return { outcome, response: lostResponse(), answerLost: true };
  }
  return { outcome, response: outcomeToResponse(outcome), answerLost: false };
}

/** GET /api/orders/{id}: the owner sees the order; anyone else learns nothing, not even that it exists. */
export async function getOrder(request: Request, orderId: string): Promise<Response> {
  const { authenticator, db } = getServices();
  const auth = await authenticate(authenticator, request);
  if (!auth.ok) return authFailureResponse(auth.failure);

  const order = isUuid(orderId)
    ? await db.order.findFirst({
        where: { id: orderId, accountId: auth.caller.accountId },
        include: { items: true, payment: true },
      })
    : null;
  if (!order) return orderNotFoundResponse(orderId, PRIVATE);
  return jsonResponse(200, orderView(order), PRIVATE);
}

// Stripe's list defaults: 10 a page, at most 100.
const ORDER_LIST_LIMITS = { defaultLimit: 10, maxLimit: 100 };

/** GET /api/orders?limit=&starting_after=: this account's orders, newest first. */
export async function listOrders(request: Request): Promise<Response> {
  const { authenticator, db } = getServices();
  const auth = await authenticate(authenticator, request);
  if (!auth.ok) return authFailureResponse(auth.failure);
  const query = parseListParams(new URL(request.url), ORDER_LIST_LIMITS);
  if (!query.ok) return invalidQuery(query.errors);

  const page = await ordersPage(db, auth.caller.accountId, query.params);
  if (page.kind === "unknown-cursor") {
    return invalidQuery([
      {
        path: "starting_after",
        message: `no order ${query.params.startingAfter} for this account`,
      },
    ]);
  }
  return jsonResponse(
    200,
    { object: "list", data: page.orders.map(orderView), has_more: page.hasMore },
    PRIVATE,
  );
}
