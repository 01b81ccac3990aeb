/**
 * How the checkout tells the engine what a failed charge means for its key.
 * Any other error after the payment started keeps the key in flight until
 * its lease runs out, since the charge may have happened and the attempt may
 * still be finishing it.
 */

abstract class PaymentFailure extends Error {
  constructor(
    /** Safe to show to the client. */
    readonly detail: string,
    options?: { cause?: unknown },
  ) {
    super(detail, options);
  }
}

/**
 * The charge definitely did not happen and repeating it will not help (the
 * provider refused the request itself: a bad credential, a parameter it does
 * not accept). The key is released, so the same key works once the cause is
 * fixed, and the client is told what went wrong; unless an earlier attempt
 * of the same request already asked (a resumed key), whose call may have
 * charged: then the key stays in flight, its lease ended.
 */
export class PaymentRejected extends PaymentFailure {
  readonly name = "PaymentRejected";
}

/**
 * Nobody knows whether the charge happened (a timeout, a dropped
 * connection, a 5xx). The key stays in flight at its recovery point, but
 * this attempt ends its lease, so the client's retry takes the key over at
 * once and asks again under the same provider key, which returns the first
 * charge rather than making a second one.
 */
export class PaymentOutcomeUnknown extends PaymentFailure {
  readonly name = "PaymentOutcomeUnknown";
}
