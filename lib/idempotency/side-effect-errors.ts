/**
 * How an endpoint tells the idempotency layer what a failed side effect
 * means for its key. Any other error after the side effect began keeps the
 * key in flight until its lease runs out, since the effect may have happened
 * and the attempt may still be finishing it.
 */

abstract class SideEffectFailure extends Error {
  constructor(
    /** Safe to show to the client. */
    readonly detail: string,
    options?: { cause?: unknown },
  ) {
    super(detail, options);
  }
}

/**
 * The side effect definitely did not happen and repeating it will not help
 * (the provider refused the request itself: a bad credential, a parameter it
 * does not accept). The key is released, so the same key works once the
 * cause is fixed, and the client is told what went wrong; unless an earlier
 * attempt of the same request already asked (a resumed key), whose call may
 * have charged: then the key stays in flight, its lease ended.
 */
export class SideEffectRejected extends SideEffectFailure {
  readonly name = "SideEffectRejected";
}

/**
 * Nobody knows whether the side effect happened (a timeout, a dropped
 * connection, a 5xx). The key stays in flight at its recovery point, but
 * this attempt ends its lease, so the client's retry takes the key over at
 * once and repeats the side effect under the same provider key, which
 * returns the first result rather than making a second one.
 */
export class SideEffectOutcomeUnknown extends SideEffectFailure {
  readonly name = "SideEffectOutcomeUnknown";
}

/**
 * The side effect can no longer happen under this request's identity, and
 * provably did not happen under it in any attempt: the provider keeps
 * answering a failure it stored under the provider key, and looking the
 * charge up found none. Unlike a rejection, this covers earlier attempts
 * too, so the key is released even when it was resumed: the client's retry
 * starts afresh under a new key row (so a new provider key) and is charged
 * once.
 */
export class SideEffectProvedAbsent extends SideEffectFailure {
  readonly name = "SideEffectProvedAbsent";
}
