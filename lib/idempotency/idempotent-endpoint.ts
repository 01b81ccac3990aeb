import { assertNever } from "@/lib/assert-never";
import { isDatabaseUnavailable } from "@oncepay/idempotency";
import { IDEMPOTENCY_KEY_HEADER } from "@/lib/http/headers";
import { readJsonBody } from "@oncepay/idempotency/request";
import { DATABASE_UNAVAILABLE_RETRY_AFTER_SECONDS } from "@/lib/http/server-problems";
import { errorFields, log } from "@/lib/log";
import { addToContext } from "@/lib/observability/request-context";
import { fingerprintRequest } from "@oncepay/idempotency";
import { parseIdempotencyKey } from "@oncepay/idempotency/request";
import type { Outcome } from "@/lib/idempotency/outcomes";
import { PaymentOutcomeUnknown, PaymentRejected } from "@/lib/idempotency/payment-errors";
import {
  LeaseLostError,
  mayHaveCharged,
  type Claim,
  type ClaimResult,
  type IdempotencyStore,
  type KeyCompletion,
} from "@/lib/idempotency/store";
import type { StoredResponse } from "@oncepay/idempotency";

/**
 * The server algorithm of DESIGN.md, for one paying endpoint:
 *
 *   1. validate the key and the body (nothing is written on failure),
 *   2. claim the key, or answer from its row (a replay, a 409, a 422),
 *   3. admit a request that claimed a new key (the rate limit), or
 *      release the claim,
 *   4. mark the payment started, then charge, while the lease is held,
 *   5. write the order and the completed key in one commit,
 *   6. on failure before the payment started (or when it provably did not
 *      happen), release the key; after it, keep the key in flight at its
 *      recovery point until a retry or the recovery worker takes it over.
 *
 * It takes a Request and returns an Outcome; app/ maps that to HTTP.
 */

export type BodyParseResult<Body> =
  | {
      ok: true;
      body: Body;
      /**
       * The request as the endpoint reads it, every field it does not know
       * dropped: what the key stores for a resume (which parses it again),
       * so a client cannot make us keep kilobytes of extras for a day. The
       * fingerprint still covers the body as sent.
       */
      request: unknown;
    }
  | { ok: false; detail: string; errors: { path: string; message: string }[] };

export interface EndpointContext<Body> {
  accountId: string;
  idempotencyKey: string;
  /** The request's fingerprint, as its key row keeps it: the same for every attempt of one request. */
  fingerprint: string;
  body: Body;
  claim: Claim;
  /**
   * Call right before asking the provider to charge, with what it will be
   * asked. From then on a failure keeps the key in flight rather than
   * releasing it, since the charge may have happened, and whoever resumes
   * the request finds `paymentRequest` in `claim.paymentRequest` and asks
   * exactly that again.
   */
  markPaymentStarted(paymentRequest: unknown): Promise<void>;
  /**
   * Moves the payment on to the request's next provider key, durably, once
   * the provider proved the current one can never charge; the claim then
   * names the new key (`claim.providerKeyGeneration`).
   */
  startNextProviderKey(): Promise<void>;
  /** Keeps the provider's answer with the key (`charged`), so a resumed request writes the order from it without asking again. */
  recordCharge(chargeResult: unknown): Promise<void>;
  /** Writes the order's rows and completes the key with the response, in one commit. */
  complete(completion: KeyCompletion): Promise<void>;
}

export interface IdempotentEndpoint<Body> {
  store: IdempotencyStore;
  parseBody(json: unknown): BodyParseResult<Body>;
  /**
   * Whether a request that claimed a new key may go on (the account's rate
   * limit): undefined admits, an Outcome refuses. Asked once per new key,
   * right after its claim, so exactly the requests that claim are counted;
   * never for an answer the key's row gives (a replay, a 409, a 422), nor
   * for a takeover, which resumes a request admitted when it first claimed.
   */
  admit?(accountId: string): Promise<Outcome | undefined>;
  perform(context: EndpointContext<Body>): Promise<StoredResponse>;
}

/**
 * How long a client is told to wait (Retry-After) before it sends the same
 * key again, by why it has no answer yet. The endpoint decides this, not the
 * store: it is advice about HTTP retries, and the store knows only rows.
 */
export const RETRY_AFTER_SECONDS = {
  // Another attempt holds the key. Most checkouts finish within a second,
  // and a shorter wait would only turn into more 409s.
  inFlight: 1,
  // Our attempt lost the key to a takeover: the new holder is now running it.
  leaseLost: 1,
  // The provider did not answer; the lease is already handed back, so the
  // retry resumes the key as soon as the provider answers again.
  dependencyUnavailable: 1,
  databaseUnavailable: DATABASE_UNAVAILABLE_RETRY_AFTER_SECONDS,
} as const;

export async function runIdempotent<Body>(
  endpoint: IdempotentEndpoint<Body>,
  request: Request,
  accountId: string,
): Promise<Outcome> {
  const keyResult = parseIdempotencyKey(request.headers.get(IDEMPOTENCY_KEY_HEADER));
  if (!keyResult.ok) return { kind: `key-${keyResult.reason}`, detail: keyResult.detail };
  addToContext({ idempotencyKey: keyResult.key });

  const read = await readJsonBody(request);
  if (!read.ok) return { kind: read.reason, detail: read.detail };

  const parsed = endpoint.parseBody(read.json);
  if (!parsed.ok) return { kind: "invalid-body", detail: parsed.detail, errors: parsed.errors };

  const method = request.method.toUpperCase();
  const path = new URL(request.url).pathname;
  const fingerprint = fingerprintRequest(method, path, read.json);
  const claimed = await endpoint.store.claimKey({
    accountId,
    key: keyResult.key,
    method,
    path,
    fingerprint,
    body: parsed.request,
  });
  if (claimed.kind !== "claimed") return existingKeyOutcome(claimed);
  const { claim } = claimed;
  addToContext({ keyId: claim.keyId });

  const { admit } = endpoint;
  if (admit && !claim.tookOver) {
    const refusal = await admitOrRelease(endpoint.store, claim, () => admit(accountId));
    if (refusal) return refusal;
  }
  return performWithClaim(endpoint, claim, {
    accountId,
    idempotencyKey: keyResult.key,
    fingerprint,
    body: parsed.body,
  });
}

/**
 * Asks the endpoint to admit a request whose new key it has just claimed.
 * Nothing has happened under a claim this young, so a refusal (or a failure
 * to decide) releases it: nothing stays stored under the key, and the same
 * key works once the endpoint admits it.
 */
async function admitOrRelease(
  store: IdempotencyStore,
  claim: Claim,
  admit: () => Promise<Outcome | undefined>,
): Promise<Outcome | undefined> {
  try {
    const refusal = await admit();
    if (refusal) await releaseQuietly(store, claim);
    return refusal;
  } catch (error) {
    await releaseQuietly(store, claim);
    throw error;
  }
}

/** The answer when the key already had a row this attempt could not take. */
function existingKeyOutcome(result: Exclude<ClaimResult, { kind: "claimed" }>): Outcome {
  switch (result.kind) {
    case "replay":
    case "fingerprint-mismatch":
      return result;
    case "in-flight":
      return { kind: "in-flight", retryAfterSeconds: RETRY_AFTER_SECONDS.inFlight };
    default:
      return assertNever(result, "claim result");
  }
}

/** What the key keeps of a request, for the recovery worker to resume it. */
export interface StoredRequest {
  accountId: string;
  idempotencyKey: string;
  fingerprint: string;
  requestBody: unknown;
}

/** Resumes an abandoned request of one endpoint, whatever its body: what the recovery worker needs of it. */
export type Resumer = (claim: Claim, stored: StoredRequest) => Promise<Outcome>;

export function resumerOf<Body>(endpoint: IdempotentEndpoint<Body>): Resumer {
  return (claim, stored) => resumeAbandoned(endpoint, claim, stored);
}

/**
 * Finishes a request whose attempt died after its payment started, from the
 * body stored with its key. Used by the recovery worker once it has taken
 * the key over; asking the provider again is safe, since the call carries a
 * provider idempotency key of its own.
 */
export async function resumeAbandoned<Body>(
  endpoint: IdempotentEndpoint<Body>,
  claim: Claim,
  stored: StoredRequest,
): Promise<Outcome> {
  const parsed = endpoint.parseBody(stored.requestBody);
  if (!parsed.ok) {
    // Only a body that passed validation is ever stored, so the rules changed
    // since (a product left the catalog, say). Before the payment started
    // nothing happened and the key can go; after it, a charge may exist that
    // must not be orphaned, so the key stays in flight for someone to look at.
    if (mayHaveCharged(claim.recoveryPoint)) {
      log.error("idempotency.resume_body_invalid", {
        keyId: claim.keyId,
        recoveryPoint: claim.recoveryPoint,
        detail: parsed.detail,
      });
    } else {
      await releaseQuietly(endpoint.store, claim);
    }
    return { kind: "invalid-body", detail: parsed.detail, errors: parsed.errors };
  }
  return performWithClaim(endpoint, claim, {
    accountId: stored.accountId,
    idempotencyKey: stored.idempotencyKey,
    fingerprint: stored.fingerprint,
    body: parsed.body,
  });
}

async function performWithClaim<Body>(
  endpoint: IdempotentEndpoint<Body>,
  claim: Claim,
  request: { accountId: string; idempotencyKey: string; fingerprint: string; body: Body },
): Promise<Outcome> {
  // An earlier attempt that got past `claimed` may have been charged,
  // whatever this attempt learns about its own try.
  const earlierAttemptMayHaveCharged = mayHaveCharged(claim.recoveryPoint);
  let paymentStarted = earlierAttemptMayHaveCharged;
  const context: EndpointContext<Body> = {
    ...request,
    claim,
    async markPaymentStarted(paymentRequest) {
      await endpoint.store.markPaymentStarted(claim, paymentRequest);
      paymentStarted = true;
    },
    startNextProviderKey: () => endpoint.store.startNextProviderKey(claim),
    recordCharge: (chargeResult) => endpoint.store.recordCharge(claim, chargeResult),
    complete: (completion) => endpoint.store.completeKey(claim, completion),
  };

  try {
    const stored = await endpoint.perform(context);
    return { kind: "completed", stored };
  } catch (error) {
    // A rejection proves only that this attempt's call charged nothing; after
    // an earlier attempt's, releasing the key could orphan its charge.
    const nothingHappened =
      !paymentStarted || (error instanceof PaymentRejected && !earlierAttemptMayHaveCharged);
    if (nothingHappened) await releaseQuietly(endpoint.store, claim);
    else if (error instanceof PaymentOutcomeUnknown || error instanceof PaymentRejected)
      await endLeaseQuietly(endpoint.store, claim);
    return failureOutcome(error, claim, paymentStarted);
  }
}

// If ending the lease fails, the lease simply runs its course.
async function endLeaseQuietly(store: IdempotencyStore, claim: Claim): Promise<void> {
  try {
    await store.endLease(claim);
  } catch (error) {
    log.warn("idempotency.end_lease_failed", { keyId: claim.keyId, ...errorFields(error) });
  }
}

// If the release itself fails (say the database just went away) the key is
// still safe: its lease expires and the next retry takes it over.
async function releaseQuietly(store: IdempotencyStore, claim: Claim): Promise<void> {
  try {
    await store.releaseKey(claim);
  } catch (error) {
    log.warn("idempotency.release_failed", { keyId: claim.keyId, ...errorFields(error) });
  }
}

function failureOutcome(error: unknown, claim: Claim, paymentStarted: boolean): Outcome {
  if (error instanceof LeaseLostError) {
    log.warn("idempotency.lease_lost", { keyId: claim.keyId });
    return { kind: "lease-lost", retryAfterSeconds: RETRY_AFTER_SECONDS.leaseLost };
  }
  const fields = { keyId: claim.keyId, paymentStarted, ...errorFields(error) };
  if (error instanceof PaymentRejected) {
    log.error("idempotency.payment_rejected", fields);
    return { kind: "dependency-rejected", detail: error.detail };
  }
  if (error instanceof PaymentOutcomeUnknown) {
    log.warn("idempotency.payment_outcome_unknown", fields);
    return {
      kind: "dependency-unavailable",
      detail: error.detail,
      retryAfterSeconds: RETRY_AFTER_SECONDS.dependencyUnavailable,
    };
  }
  if (isDatabaseUnavailable(error)) {
    log.error("idempotency.database_unavailable", fields);
    return {
      kind: "database-unavailable",
      retryAfterSeconds: RETRY_AFTER_SECONDS.databaseUnavailable,
    };
  }
  log.error("idempotency.perform_failed", fields);
  return { kind: "internal-error" };
}
