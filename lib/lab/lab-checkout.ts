import { randomUUID } from "node:crypto";
import { authenticate, authFailureResponse, type Authenticator } from "@/lib/auth/accounts";
import type { Database } from "@/lib/db/client";
import type pg from "pg";
import { run as runStatement, type Queryable } from "@/lib/db/sql";
import { demoFaultsDisabledResponse, demoFaultsEnabled } from "@/lib/demo/settings";
import {
  IDEMPOTENCY_KEY_HEADER,
  IDEMPOTENT_REPLAYED_HEADER,
  LAB_CRASH_HEADER,
  RETRY_AFTER_HEADER,
} from "@/lib/http/headers";
import { jsonResponse } from "@/lib/http/json";
import { lostResponse } from "@/lib/http/lost-response";
import { PROBLEM_CONTENT_TYPE, problemResponse, problemType } from "@/lib/http/problem";
import { readJsonBody } from "@oncepay/idempotency/request";
import { requestProblemResponse } from "@/lib/http/request-problems";
import { parseCheckoutRequest, type PricedCart } from "@/lib/orders/cart";
import { orderRowsStatement } from "@/lib/orders/order-rows-sql";
import { chargeWrite, type ChargeWrite } from "@/lib/orders/record";
import type { RateLimit } from "@/lib/limits/rate-limit";
import {
  PaymentProviderError,
  type ChargeResult,
  type PaymentProvider,
} from "@/lib/payments/provider";
import { errorFields, log } from "@/lib/log";
import { refusedByLabLimit } from "@/lib/lab/admission";
import { LAB_PROVIDER_KEY_PREFIX, LAB_STORM_METADATA } from "@/lib/lab/charge-tags";
import { LabKeyStoreUnavailable } from "@/lib/lab/key-stores/unavailable";
import { LAB_STRATEGY_INFO, type LabStrategy } from "@/lib/lab/strategies";

/**
 * What the lab's broken strategies share, so that each of them differs from
 * the real checkout only in the one thing it gets wrong: who is asking, the
 * demo-faults gate, the body read and priced exactly as the checkout does,
 * the charge, and the order written by the checkout's own code.
 *
 * None of it touches lib/idempotency (an ESLint rule enforces that): a broken
 * strategy must fail for want of a correct key protocol, not because it
 * borrowed half of one.
 */
export type LabOnlyStrategy = Exclude<LabStrategy, "atomic_claim">;

/** What the checkout's order writing answers: the status, headers and body to send (and, under a key, to store). */
export type LabResult = ChargeWrite["response"];

export interface LabCheckout {
  db: Database;
  /** The same connections, for a strategy's own transaction (inTransaction(pool, …)) around the order writes. */
  pool: pg.Pool;
  /** The same connections again, for the order written as one statement, prepared as the checkout's statements are (lib/db/statements.ts). */
  statements: Queryable;
  provider: PaymentProvider;
  strategy: LabOnlyStrategy;
  accountId: string;
  cart: PricedCart;
  /** The storm this request belongs to, when it carries a storm's cart: its charges are tagged with it. */
  stormId: string | null;
  /**
   * Where the lab's crash scenario may stop this request for good: with
   * `OncePay-Lab-Crash: after-charge` it never returns, so none of the
   * strategy's own error handling or cleanup runs (as when a process dies),
   * and the client sees the connection drop. Otherwise it does nothing.
   */
  crashPoint(point: LabCrashPoint): Promise<void>;
}

/** Where the crash scenario stops a request: the charge is made, nothing after it is. */
export type LabCrashPoint = "after-charge";

/** What the lab's strategies run on, handed over by the API layer. */
export type LabServices = Pick<LabCheckout, "db" | "pool" | "statements" | "provider"> & {
  authenticator: Authenticator;
  /** The lab's requests per account (LAB_RATE_LIMIT). */
  labLimit: RateLimit;
};

export async function runLabCheckout(
  request: Request,
  { authenticator, labLimit, db, pool, statements, provider }: LabServices,
  strategy: LabOnlyStrategy,
  run: (checkout: LabCheckout) => Promise<Response>,
): Promise<Response> {
  const auth = await authenticate(authenticator, request);
  if (!auth.ok) return authFailureResponse(auth.failure);
  const refused = await refusedByLabLimit(labLimit, auth.caller.accountId);
  if (refused) return refused;
  if (!demoFaultsEnabled()) {
    return demoFaultsDisabledResponse(
      `This server was started without DEMO_FAULTS=on, so the lab's "${LAB_STRATEGY_INFO[strategy].name}" strategy is switched off: it would charge twice on purpose.`,
    );
  }
  const read = await readJsonBody(request);
  if (!read.ok) return requestProblemResponse(read.reason, read.detail);
  const parsed = parseCheckoutRequest(read.json);
  if (!parsed.ok) return requestProblemResponse("invalid-body", parsed.detail, parsed.errors);

  const accountId = auth.caller.accountId;
  const storm = await db.labStorm.findUnique({
    where: { accountId_cartId: { accountId, cartId: parsed.body.cartId } },
    select: { id: true, strategy: true },
  });
  const crashAt = request.headers.get(LAB_CRASH_HEADER);
  let crashed: (response: Response) => void = () => undefined;
  const crash = new Promise<Response>((resolve) => (crashed = resolve));
  const checkout: LabCheckout = {
    db,
    pool,
    statements,
    provider,
    strategy,
    accountId,
    cart: parsed.body,
    stormId: storm?.strategy === strategy ? storm.id : null,
    async crashPoint(point) {
      if (crashAt !== point) return;
      log.warn("lab.crash", { strategy, point });
      crashed(lostResponse());
      // This request's code stops here for good; the rest of the server runs on.
      await new Promise<never>(() => undefined);
    },
  };
  return Promise.race([run(checkout).catch(dependencyFailure), crash]);
}

// How long a client should wait before trying again, as the checkout tells
// it for the same failures: the provider's blip is usually over in a
// second; a key store that could not be reached is given a little longer.
const PROVIDER_RETRY_AFTER_SECONDS = 1;
const KEY_STORE_RETRY_AFTER_SECONDS = 2;

/**
 * A dependency a strategy needs failed: its key store is not there, or the
 * payment provider did not answer or refused the charge. The client gets a
 * stable problem type and words of ours (and the request id, on every
 * answer); what the dependency's client said, where it was looked for and
 * what an operator can set go to the log, under the same request id.
 */
function dependencyFailure(error: unknown): Response {
  if (error instanceof LabKeyStoreUnavailable) {
    log.error("lab.key_store_unavailable", { store: error.store, ...errorFields(error) });
    return dependencyUnavailable(
      `The lab's ${error.store} key store is not available on this server, so this strategy cannot run. Nothing was charged.`,
      KEY_STORE_RETRY_AFTER_SECONDS,
    );
  }
  const failure = paymentFailureIn(error);
  if (!failure) throw error;
  log.warn("lab.payment_failed", { outcome: failure.outcome, ...errorFields(failure) });
  if (failure.outcome === "rejected")
    return problemResponse({
      type: problemType("dependency-rejected"),
      title: "A service this request needs refused it",
      status: 502,
      detail: "The payment provider refused the request, so nothing was charged.",
    });
  return dependencyUnavailable(
    "The payment provider did not answer, so whether this request was charged is not known. The lab's strategies charge with no key the provider knows again: a retry may charge twice.",
    PROVIDER_RETRY_AFTER_SECONDS,
  );
}

function dependencyUnavailable(detail: string, retryAfterSeconds: number): Response {
  return problemResponse(
    {
      type: problemType("dependency-unavailable"),
      title: "A service this request needs did not answer",
      status: 503,
      detail,
    },
    { [RETRY_AFTER_HEADER]: String(retryAfterSeconds) },
  );
}

// Powertools and the copied designs may wrap what the checkout threw.
function paymentFailureIn(error: unknown): PaymentProviderError | undefined {
  for (let cause = error, depth = 0; cause instanceof Error && depth < 4; depth++) {
    if (cause instanceof PaymentProviderError) return cause;
    cause = cause.cause;
  }
  return undefined;
}

/**
 * Charges the cart under a provider key of its own: the provider cannot tell
 * one request from another either, as with code that calls a provider
 * without an idempotency key (Stripe's SDK then makes up a fresh one per
 * call). Had these strategies passed one key per intent, the provider's own
 * idempotency would hide what the strategy gets wrong.
 */
export async function chargeOnce(
  checkout: LabCheckout,
): Promise<{ charge: ChargeResult; providerKey: string }> {
  const providerKey = `${LAB_PROVIDER_KEY_PREFIX}${checkout.strategy}:${randomUUID()}`;
  const charge = await checkout.provider.charge({
    amount: checkout.cart.total,
    currency: checkout.cart.currency,
    paymentMethod: checkout.cart.paymentMethod,
    idempotencyKey: providerKey,
    ...(checkout.stormId && { metadata: { [LAB_STORM_METADATA]: checkout.stormId } }),
  });
  return { charge, providerKey };
}

/** The order (or the decline) for one charge, written by the checkout's own code, on the pool or in a strategy's transaction. */
export async function recordLabOutcome(
  db: Queryable,
  checkout: LabCheckout,
  charged: { charge: ChargeResult; providerKey: string },
  idempotencyKey: string | null,
): Promise<LabResult> {
  const { response, rows } = chargeWrite({
    accountId: checkout.accountId,
    keyId: null,
    idempotencyKey,
    source: `lab_${checkout.strategy}`,
    providerKey: charged.providerKey,
    cart: checkout.cart,
    charge: charged.charge,
    provider: checkout.provider.name,
  });
  await runStatement(db, orderRowsStatement(rows));
  return response;
}

/**
 * The Idempotency-Key as the code these strategies copy reads it: the raw
 * header, present and not absurdly long. (The real parser, with the RFC 8941
 * form, lives in lib/idempotency, which the lab may not use.)
 */
export function labIdempotencyKey(
  request: Request,
): { ok: true; key: string } | { ok: false; response: Response } {
  const key = request.headers.get(IDEMPOTENCY_KEY_HEADER)?.trim() ?? "";
  if (key.length > 0 && key.length <= 255) return { ok: true, key };
  return {
    ok: false,
    response: problemResponse({
      type: problemType("idempotency-key-invalid"),
      title: `${IDEMPOTENCY_KEY_HEADER} header invalid`,
      status: 400,
      detail: "This lab strategy needs an Idempotency-Key header of 1 to 255 characters.",
    }),
  };
}

export function labResponse(stored: LabResult): Response {
  return jsonResponse(stored.status, stored.body, stored.headers);
}

/** A response a lab strategy stored with its key, sent again. Its table keeps no headers: a 4xx is a problem. */
export function labReplay(stored: { responseStatus: number; responseBody: unknown }): Response {
  const contentType = stored.responseStatus >= 400 ? PROBLEM_CONTENT_TYPE : "application/json";
  return jsonResponse(stored.responseStatus, stored.responseBody, {
    "Content-Type": contentType,
    [IDEMPOTENT_REPLAYED_HEADER]: "true",
  });
}

/** What the copied designs answer while another request holds the key: 409, retry shortly, as OncePay does. */
export function labInProgress(detail: string): Response {
  return problemResponse(
    {
      type: problemType("request-in-progress"),
      title: "A request with this key is still in progress",
      status: 409,
      detail,
    },
    { [RETRY_AFTER_HEADER]: "1" },
  );
}
