import { assertNever } from "@/lib/assert-never";
import { isDatabaseUnavailable } from "@/lib/db/errors";
import { IDEMPOTENCY_KEY_HEADER } from "@/lib/http/headers";
import { readJsonBody } from "@/lib/http/request-body";
import { DATABASE_UNAVAILABLE_RETRY_AFTER_SECONDS } from "@/lib/http/server-problems";
import { errorFields, log } from "@/lib/log";
import { addToContext } from "@/lib/observability/request-context";
import { fingerprintRequest } from "@/lib/idempotency/fingerprint";
import { parseIdempotencyKey } from "@/lib/idempotency/key";
import type { Outcome } from "@/lib/idempotency/outcomes";
import {
  SideEffectOutcomeUnknown,
  SideEffectProvedAbsent,
  SideEffectRejected,
} from "@/lib/idempotency/side-effect-errors";
import {
  LeaseLostError,
  type Claim,
  type ClaimRequest,
  type ClaimResult,
  type IdempotencyStore,
  type InFlightRecoveryPoint,
  type KeyCompletion,
} from "@/lib/idempotency/store";
import type { StoredResponse } from "@/lib/idempotency/stored-response";

/**
 * The server algorithm of DESIGN.md, for one endpoint:
 *
 *   1. validate the key and the body (nothing is written on failure),
 *   2. answer from the key's row if it has one; otherwise claim it
 *      atomically, in the same statement, and admit the request from what
 *      that statement also asked (e.g. its rate limit; a refusal releases
 *      the claim),
 *   3. let the endpoint run its side effect while the lease is held,
 *   4. write the endpoint's result and the completed key in one statement,
 *   5. on failure before the side effect (or when it definitely did not
 *      happen), release the key; after it, keep the key in flight at its
 *      recovery point until a retry or the recovery worker takes it over.
 *
 * It takes a Request and returns an Outcome; app/ maps that to HTTP.
 */

export type BodyParseResult<Body> =
  | { ok: true; body: Body }
  | { ok: false; detail: string; errors: { path: string; message: string }[] };

export interface EndpointContext<Body, Rows> {
  accountId: string;
  idempotencyKey: string;
  body: Body;
  claim: Claim;
  /**
   * Call right before the side effect (the charge), with what it will be
   * asked to do. From then on a failure keeps the key in flight rather than
   * releasing it, since the effect may have happened, and whoever resumes
   * the request finds `request` in `claim.sideEffectRequest` and repeats
   * exactly that call.
   */
  beginSideEffect(request: unknown): Promise<void>;
  /**
   * Keeps the side effect's result with the key (recovery point `charged`),
   * so a request resumed after a crash finds it in `claim.sideEffectResult`
   * and does not repeat the side effect.
   */
  recordSideEffectResult(result: unknown): Promise<void>;
  /** Writes the endpoint's rows and completes the key with the response, atomically. */
  complete(completion: KeyCompletion<Rows>): Promise<void>;
}

/**
 * What decides whether a request that claims a new key may go on (the
 * account's rate limit, say). It is never asked for an answer the key's row
 * already gives (a replay, a 409, a 422).
 */
export interface Admission<Question> {
  /** Asked of the store with the claim, in the claim's own statement when the key has no row yet. */
  question: Question;
  /** From the question's answer: undefined admits; an Outcome refuses, and the claim is released at once, so nothing stays stored under its key. */
  decide(answer: unknown): Outcome | undefined;
}

export interface IdempotentEndpoint<Body, Rows, Question = never> {
  store: IdempotencyStore<Rows, Question>;
  parseBody(json: unknown): BodyParseResult<Body>;
  admission?: Admission<Question>;
  perform(context: EndpointContext<Body, Rows>): Promise<StoredResponse>;
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

export async function runIdempotent<Body, Rows, Question>(
  endpoint: IdempotentEndpoint<Body, Rows, Question>,
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
  const claimRequest = {
    accountId,
    key: keyResult.key,
    method,
    path,
    fingerprint: fingerprintRequest(method, path, read.json),
    body: read.json,
  };
  // One round trip: a replay, a 409 or a 422 is answered from the key's row,
  // writing nothing, and a key without one is claimed, its admission asked
  // in the same statement. Only a request that claims is admitted (and
  // counted).
  const first = await endpoint.store.lookUpOrClaim(claimRequest, endpoint.admission?.question);
  if (first.kind !== "claimed" && first.kind !== "claimable") return existingKeyOutcome(first);

  const claimResult =
    first.kind === "claimed"
      ? await decideAdmission(endpoint, first.claim, first.answer)
      : await claimThenAdmit(endpoint, claimRequest);
  if (claimResult.kind === "refused") return claimResult.outcome;
  if (claimResult.kind !== "claimed") return existingKeyOutcome(claimResult);
  addToContext({ keyId: claimResult.claim.keyId });

  return performWithClaim(endpoint, claimResult.claim, {
    accountId,
    idempotencyKey: keyResult.key,
    body: parsed.body,
  });
}

type AdmittedClaim = ClaimResult | { kind: "refused"; outcome: Outcome };

/**
 * Admits a request whose key is claimed, from its admission's answer.
 * Nothing has happened under a claim this young, so a refusal (or a failure
 * to decide) simply releases it.
 */
async function decideAdmission<Body, Rows, Question>(
  endpoint: IdempotentEndpoint<Body, Rows, Question>,
  claim: Claim,
  answer: unknown,
): Promise<AdmittedClaim> {
  let refusal: Outcome | undefined;
  try {
    refusal = endpoint.admission?.decide(answer);
  } catch (error) {
    await releaseQuietly(endpoint.store, claim);
    throw error;
  }
  if (!refusal) return { kind: "claimed", claim };
  await releaseQuietly(endpoint.store, claim);
  return { kind: "refused", outcome: refusal };
}

/** The claim when the first look could not make it (claimKey), its admission asked meanwhile. */
async function claimThenAdmit<Body, Rows, Question>(
  endpoint: IdempotentEndpoint<Body, Rows, Question>,
  request: ClaimRequest,
): Promise<AdmittedClaim> {
  const admission = endpoint.admission;
  const [claim, answer] = await Promise.allSettled([
    endpoint.store.claimKey(request),
    admission && endpoint.store.ask(admission.question),
  ]);
  if (claim.status === "rejected") throw claim.reason;
  // Not claimed: the key's row answers, whatever the admission said.
  if (claim.value.kind !== "claimed") return claim.value;
  if (answer.status === "rejected") {
    await releaseQuietly(endpoint.store, claim.value.claim);
    throw answer.reason;
  }
  return decideAdmission(endpoint, claim.value.claim, answer.value);
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

/**
 * Finishes a request whose attempt died after it began its side effect, from
 * the body stored with its key. Used by the recovery worker once it has taken
 * the key over; the endpoint's side effect must be safe to repeat (the
 * payment provider call carries an idempotency key of its own).
 */
export async function resumeAbandoned<Body, Rows, Question>(
  endpoint: IdempotentEndpoint<Body, Rows, Question>,
  claim: Claim,
  stored: { accountId: string; idempotencyKey: string; requestBody: unknown },
): Promise<Outcome> {
  const parsed = endpoint.parseBody(stored.requestBody);
  if (!parsed.ok) {
    // Only a body that passed validation is ever stored, so the rules changed
    // since (a product left the catalog, say). Before the side effect nothing
    // happened and the key can go; after it, a charge may exist that must not
    // be orphaned, so the key stays in flight for someone to look at.
    if (sideEffectMayHaveHappened(claim.recoveryPoint)) {
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
    body: parsed.body,
  });
}

async function performWithClaim<Body, Rows, Question>(
  endpoint: IdempotentEndpoint<Body, Rows, Question>,
  claim: Claim,
  request: { accountId: string; idempotencyKey: string; body: Body },
): Promise<Outcome> {
  // An earlier attempt that got past `claimed` may have made the side effect
  // happen, whatever this attempt learns about its own try.
  const earlierAttemptMayHaveActed = sideEffectMayHaveHappened(claim.recoveryPoint);
  let sideEffectBegun = earlierAttemptMayHaveActed;
  const context: EndpointContext<Body, Rows> = {
    ...request,
    claim,
    async beginSideEffect(sideEffectRequest) {
      await endpoint.store.markSideEffectStarted(claim, sideEffectRequest);
      sideEffectBegun = true;
    },
    recordSideEffectResult: (result) => endpoint.store.recordSideEffectResult(claim, result),
    complete: (completion) => endpoint.store.completeKey(claim, completion),
  };

  try {
    const stored = await endpoint.perform(context);
    return { kind: "completed", stored };
  } catch (error) {
    // A rejection proves only that this attempt's call charged nothing; after
    // an earlier attempt's, releasing the key could orphan its charge. A
    // proved absence covers every attempt.
    const nothingHappened =
      !sideEffectBegun ||
      (error instanceof SideEffectRejected && !earlierAttemptMayHaveActed) ||
      error instanceof SideEffectProvedAbsent;
    if (nothingHappened) await releaseQuietly(endpoint.store, claim);
    else if (error instanceof SideEffectOutcomeUnknown || error instanceof SideEffectRejected)
      await endLeaseQuietly(endpoint.store, claim);
    return failureOutcome(error, claim, sideEffectBegun);
  }
}

/**
 * Whether an attempt that left a key at this recovery point may have made
 * its side effect happen. It decides whether a failure may release the key:
 * releasing one whose side effect happened would let a retry repeat it under
 * a new key row, and so charge twice.
 */
function sideEffectMayHaveHappened(recoveryPoint: InFlightRecoveryPoint): boolean {
  switch (recoveryPoint) {
    case "claimed":
      return false;
    case "payment_started": // asked for: it may or may not have happened
    case "charged": // it happened, and its answer is stored
      return true;
    default:
      return assertNever(recoveryPoint, "recovery point");
  }
}

// If ending the lease fails, the lease simply runs its course.
async function endLeaseQuietly<Rows, Question>(
  store: IdempotencyStore<Rows, Question>,
  claim: Claim,
): Promise<void> {
  try {
    await store.endLease(claim);
  } catch (error) {
    log.warn("idempotency.end_lease_failed", { keyId: claim.keyId, ...errorFields(error) });
  }
}

// If the release itself fails (say the database just went away) the key is
// still safe: its lease expires and the next retry takes it over.
async function releaseQuietly<Rows, Question>(
  store: IdempotencyStore<Rows, Question>,
  claim: Claim,
): Promise<void> {
  try {
    await store.releaseKey(claim);
  } catch (error) {
    log.warn("idempotency.release_failed", { keyId: claim.keyId, ...errorFields(error) });
  }
}

function failureOutcome(error: unknown, claim: Claim, sideEffectBegun: boolean): Outcome {
  if (error instanceof LeaseLostError) {
    log.warn("idempotency.lease_lost", { keyId: claim.keyId });
    return { kind: "lease-lost", retryAfterSeconds: RETRY_AFTER_SECONDS.leaseLost };
  }
  const fields = { keyId: claim.keyId, sideEffectBegun, ...errorFields(error) };
  if (error instanceof SideEffectRejected) {
    log.error("idempotency.side_effect_rejected", fields);
    return { kind: "dependency-rejected", detail: error.detail };
  }
  if (error instanceof SideEffectProvedAbsent) {
    log.warn("idempotency.side_effect_absent", fields);
    return {
      kind: "dependency-unavailable",
      detail: error.detail,
      retryAfterSeconds: RETRY_AFTER_SECONDS.dependencyUnavailable,
    };
  }
  if (error instanceof SideEffectOutcomeUnknown) {
    log.warn("idempotency.side_effect_outcome_unknown", fields);
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
