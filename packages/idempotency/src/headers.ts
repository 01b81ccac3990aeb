/** The header names the engine reads and writes, spelt as it writes them (HTTP compares them without case). */

/** One per operation the client means to happen once, sent with every attempt of it. */
export const IDEMPOTENCY_KEY_HEADER = "Idempotency-Key";
/** `true` on an answer replayed from a completed key rather than computed now. */
export const IDEMPOTENT_REPLAYED_HEADER = "Idempotent-Replayed";
/** Seconds a client should wait before it sends the same key again (409, 503). */
export const RETRY_AFTER_HEADER = "Retry-After";
/** RFC 7240: `wait=N`, how long the client will wait for another attempt that holds the key. */
export const PREFER_HEADER = "Prefer";
/** RFC 7240: on an answer for which the server waited as the client preferred. */
export const PREFERENCE_APPLIED_HEADER = "Preference-Applied";
/** When the key's stored answer is forgotten (an HTTP date): a retry after it is a new request. */
export const KEY_EXPIRES_HEADER = "Idempotency-Key-Expires";
/** The server's key policy, in seconds: `retention=86400, lease=30` (an RFC 9651 dictionary). */
export const KEY_POLICY_HEADER = "Idempotency-Key-Policy";
