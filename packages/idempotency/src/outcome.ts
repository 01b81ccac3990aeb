import type { FieldError } from "./operation.js";
import type { KeyLifetime } from "./store.js";
import type { StoredResponse } from "./stored-response.js";

/**
 * Everything the engine can decide about a request, as one union. What each
 * means in HTTP is the adapter's (fetch.ts); the engine speaks no HTTP.
 */
export type Outcome =
  // Refused before anything is written: the key stays usable.
  | { kind: "invalid-body"; detail: string; errors: FieldError[] }
  // Decided by the key's existing row, whose lifetime the answer tells;
  // `waited` when the request waited for another attempt (Prefer: wait).
  | { kind: "replay"; stored: StoredResponse; lifetime: KeyLifetime; waited?: Waited }
  | { kind: "in-flight"; retryAfterSeconds: number; lifetime?: KeyLifetime; waited?: Waited }
  | { kind: "fingerprint-mismatch"; lifetime: KeyLifetime }
  // This attempt's own result.
  | { kind: "completed"; stored: StoredResponse; lifetime: KeyLifetime }
  // Failures on our side.
  | { kind: "lease-lost"; retryAfterSeconds: number }
  | { kind: "database-unavailable"; retryAfterSeconds: number }
  | { kind: "internal-error" }
  // A side effect's service refused the call, or did not answer.
  | { kind: "dependency-rejected"; detail: string }
  | { kind: "dependency-unavailable"; detail: string; retryAfterSeconds: number };

/**
 * How long a client is told to wait (Retry-After) before it sends the same
 * key again, by why it has no answer yet.
 */
export const RETRY_AFTER_SECONDS = {
  // Another attempt holds the key; most finish within a second, and a
  // shorter wait would only turn into more 409s.
  inFlight: 1,
  // This attempt lost the key to a takeover: the new holder is running it.
  leaseLost: 1,
  // The service did not answer; the lease is already handed back, so the
  // retry resumes the key as soon as the service answers again.
  dependencyUnavailable: 1,
  // Long enough for a connection pool to find the database again after a
  // blip, short enough that a client is not kept waiting.
  databaseUnavailable: 2,
} as const;

/** How long a request waited for another attempt that held its key, and the longest it would have. */
export interface Waited {
  forMs: number;
  upToMs: number;
}
