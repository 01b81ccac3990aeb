import { KEY_EXPIRES_HEADER, KEY_POLICY_HEADER } from "./headers.js";
import type { KeyLifetime } from "./store.js";

/**
 * A keyed answer's word on its key's life: when its stored result is
 * forgotten, and the policy (how long keys are kept, how long an attempt
 * holds one). A client stops retrying well before the first, since a retry
 * after it is a new request. The same on a first answer and on its replays:
 * the expiry is the key's, set when it was claimed.
 */
export function keyLifetimeHeaders(lifetime: KeyLifetime | undefined): Record<string, string> {
  if (!lifetime) return {};
  return {
    // An HTTP date (IMF-fixdate) has whole seconds: rounding down errs early.
    [KEY_EXPIRES_HEADER]: lifetime.expiresAt.toUTCString(),
    [KEY_POLICY_HEADER]: `retention=${lifetime.retentionSeconds}, lease=${lifetime.leaseSeconds}`,
  };
}
