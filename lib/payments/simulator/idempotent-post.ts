import type http from "node:http";
import { setTimeout as delay } from "node:timers/promises";
import type pg from "pg";
import { inTransaction, type Transaction } from "@/lib/db/transaction";
import {
  idempotencyKeyInUse,
  idempotencyKeyReused,
  invalidRequest,
  NO_RETRY,
  storedApiError,
  type ApiResponse,
} from "@/lib/payments/simulator/errors";
import type { FailureMode, Faults } from "@/lib/payments/simulator/faults";
import { FormError, parseForm, type FormObject } from "@/lib/payments/simulator/form";
import {
  claimKey,
  completeKey,
  fingerprintRequest,
  holdLease,
  releaseKey,
} from "@/lib/payments/simulator/idempotency";

/**
 * How every POST that moves money runs (a PaymentIntent confirmed, a
 * refund), so each gets the same Idempotency-Key semantics and the same
 * injected faults: read the form, let the endpoint validate it, claim the
 * key (idempotency.ts), wait out any injected latency, then move the money
 * and complete the key with the answer in one transaction. Validation comes
 * first so that, as at Stripe, a rejected request stores nothing under its key.
 */
export interface MoneyPost {
  path: string;
  request: http.IncomingMessage;
  body: string;
  account: string;
  requestId: string;
  /** The one-shot failure this request took, if any (faults.ts). */
  failure: FailureMode | null;
}

/**
 * What the endpoint does once the key is held: inside `tx`, which also
 * stores its answer under the key (`idempotencyKey`, null when none was
 * sent), so the money and its answer commit together or not at all.
 */
export type MoneyMove = (tx: Transaction, idempotencyKey: string | null) => Promise<ApiResponse>;

export type PostForm = { ok: true; form: FormObject } | { ok: false; response: ApiResponse };

/** The body as Stripe reads it: form-encoded, or a 400 before anything else happens. */
export function readPostForm(call: Pick<MoneyPost, "request" | "body">): PostForm {
  const contentType = call.request.headers["content-type"] ?? "";
  if (
    call.body !== "" &&
    !contentType.toLowerCase().startsWith("application/x-www-form-urlencoded")
  ) {
    return {
      ok: false,
      response: invalidRequest(
        "Invalid request: send parameters form-encoded (Content-Type: application/x-www-form-urlencoded), as Stripe's API expects.",
      ),
    };
  }
  try {
    return { ok: true, form: parseForm(call.body) };
  } catch (error) {
    if (error instanceof FormError)
      return {
        ok: false,
        response: invalidRequest(error.message, error.param ? { param: error.param } : {}),
      };
    throw error;
  }
}

/**
 * Runs `move` once per Idempotency-Key: the first request with a key moves
 * the money; a repeat replays its answer; the key with another form is 400;
 * the key while its first request runs is 409. `form` is what the
 * fingerprint is taken of, the parameters as sent.
 */
export async function runMoneyPost(
  pool: pg.Pool,
  faults: Faults,
  call: MoneyPost,
  form: FormObject,
  move: MoneyMove,
): Promise<ApiResponse> {
  const keyFields = call.request.headersDistinct["idempotency-key"];
  if (keyFields === undefined) {
    await delay(faults.latencyMs);
    return inTransaction(pool, async (tx) => {
      const moved =
        call.failure === "http_500_stored_before_charge" ? undefined : await move(tx, null);
      // Without a key there is nothing to store the 500 under: it is just a 500.
      return isStored500(call.failure) ? { ...storedApiError(), headers: NO_RETRY } : moved!;
    });
  }
  // Two fields would leave it open which request the key names.
  if (keyFields.length !== 1) return invalidRequest("Send the Idempotency-Key header once.");
  const key = keyFields[0]!;
  if (key.length === 0 || key.length > 255) {
    return invalidRequest("Invalid Idempotency-Key: it must be between 1 and 255 characters long.");
  }
  const echoed = { "Idempotency-Key": key };

  const claimed = await claimKey(pool, {
    account: call.account,
    key,
    fingerprint: fingerprintRequest("POST", call.path, form),
    requestId: call.requestId,
  });
  switch (claimed.kind) {
    case "replay": {
      const noRetry = claimed.stored.status >= 500 ? NO_RETRY : {};
      return {
        ...claimed.stored,
        headers: {
          ...echoed,
          ...noRetry,
          "Idempotent-Replayed": "true",
          "Original-Request": claimed.originalRequest,
        },
      };
    }
    case "fingerprint-mismatch":
      return { ...idempotencyKeyReused(key), headers: echoed };
    case "in-flight":
      return { ...idempotencyKeyInUse(key), headers: echoed };
  }

  const claim = claimed.claim;
  try {
    await delay(faults.latencyMs);
    const answer = await inTransaction(pool, async (tx) => {
      if (!(await holdLease(tx, claim))) return undefined;
      const moved =
        call.failure === "http_500_stored_before_charge" ? undefined : await move(tx, key);
      // The injected Stripe failure: whatever happened, the key keeps a 500.
      const result = isStored500(call.failure) ? storedApiError() : moved!;
      await completeKey(tx, claim, result);
      return result;
    });
    // Our lease ran out and another request took the key over: it moves the money, we don't.
    if (!answer) return { ...idempotencyKeyInUse(key), headers: echoed };
    const noRetry = answer.status >= 500 ? NO_RETRY : {};
    return { ...answer, headers: { ...echoed, ...noRetry, "Original-Request": call.requestId } };
  } catch (error) {
    // Nothing was moved unless the transaction committed. If it did (the
    // COMMIT's answer was lost), the key is complete and this matches no
    // row; if not, the key is released for a retry to run afresh.
    await releaseKey(pool, claim).catch(() => undefined);
    throw error;
  }
}

function isStored500(failure: FailureMode | null): boolean {
  return failure === "http_500_stored_after_charge" || failure === "http_500_stored_before_charge";
}
