/** The header names the engine reads and writes, spelt as it writes them (HTTP compares them without case). */

/** One per operation the client means to happen once, sent with every attempt of it. */
export const IDEMPOTENCY_KEY_HEADER = "Idempotency-Key";
/** `true` on an answer replayed from a completed key rather than computed now. */
export const IDEMPOTENT_REPLAYED_HEADER = "Idempotent-Replayed";
/** Seconds a client should wait before it sends the same key again (409, 503). */
export const RETRY_AFTER_HEADER = "Retry-After";
