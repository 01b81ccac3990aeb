/**
 * How a side effect tells the engine what a failed call means for its key.
 * Any other error after the key moved keeps it in flight until its lease
 * runs out, since the call may have happened and the attempt may still be
 * finishing it.
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
 * The call definitely did not happen and repeating it will not help (the
 * service refused the request itself: a bad credential, a parameter it does
 * not take). Answered 502; the key is released if its phase allows it
 * (`rejectionReleasesKey`), else kept in flight with its lease ended.
 */
export class SideEffectRejected extends SideEffectFailure {
  readonly name = "SideEffectRejected";
}

/**
 * Nobody knows whether the call happened (a timeout, a dropped connection,
 * a 5xx). Answered 503 with Retry-After; the key stays at its recovery
 * point with its lease ended, so the retry resumes it at once and calls
 * again under the same side-effect key, which the service answers with the
 * first result rather than doing it twice.
 */
export class SideEffectOutcomeUnknown extends SideEffectFailure {
  readonly name = "SideEffectOutcomeUnknown";
}
