/**
 * The names of the HTTP headers OncePay's contract speaks of (DESIGN.md), in
 * one module with no imports, so the server, the browser client, the tests
 * and the benchmark all spell them alike. HTTP header names are
 * case-insensitive; these are the spellings OncePay writes.
 */

/** One per purchase intent, sent with every attempt of it (the request's identity). */
export const IDEMPOTENCY_KEY_HEADER = "Idempotency-Key";
/** `true` on an answer replayed from a completed key instead of computed now. */
export const IDEMPOTENT_REPLAYED_HEADER = "Idempotent-Replayed";
/** One per attempt, on every response: the attempt's identity, unlike the key. */
export const REQUEST_ID_HEADER = "X-Request-Id";
/** Seconds a client should wait before sending the same key again (409, 503). */
export const RETRY_AFTER_HEADER = "Retry-After";
/** The challenge every 401 carries (RFC 9110). */
export const WWW_AUTHENTICATE_HEADER = "WWW-Authenticate";
/** Asks the server to fail at one point on purpose (tests and demos, with demo faults on). */
export const FAULT_HEADER = "OncePay-Fault";
/** The strategy lab's crash scenario: stop this request for good at a named point (lab strategies only, demo faults on). */
export const LAB_CRASH_HEADER = "OncePay-Lab-Crash";
