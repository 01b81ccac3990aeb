/**
 * The names of the HTTP headers OncePay's contract speaks of (DESIGN.md), in
 * one module that imports nothing but the engine's names, so the server, the browser client, the tests
 * and the benchmark all spell them alike. HTTP header names are
 * case-insensitive; these are the spellings OncePay writes.
 */

// The key's own headers are the engine's, spelt once in its package (whose
// "./headers" imports nothing either).
export {
  IDEMPOTENCY_KEY_HEADER,
  IDEMPOTENT_REPLAYED_HEADER,
  KEY_EXPIRES_HEADER,
  KEY_POLICY_HEADER,
  PREFER_HEADER,
  PREFERENCE_APPLIED_HEADER,
  RETRY_AFTER_HEADER,
} from "@oncepay/idempotency/headers";
/** One per attempt, on every response: the attempt's identity, unlike the key. */
export const REQUEST_ID_HEADER = "X-Request-Id";
/** The challenge every 401 carries (RFC 9110). */
export const WWW_AUTHENTICATE_HEADER = "WWW-Authenticate";
/** Asks the server to fail at one point on purpose (tests and demos, with demo faults on). */
export const FAULT_HEADER = "OncePay-Fault";
/** The strategy lab's crash scenario: stop this request for good at a named point (lab strategies only, demo faults on). */
export const LAB_CRASH_HEADER = "OncePay-Lab-Crash";
