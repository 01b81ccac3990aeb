import { createHash } from "node:crypto";
import type { KeyedRequest } from "@oncepay/idempotency";
import { paymentProviderKeyPrefix } from "@/lib/orders/provider-key";

/**
 * The idempotency key the payment provider sees for a refund: made from the
 * request (account, Idempotency-Key, fingerprint), not from its key row, as
 * a charge's is (lib/orders/provider-key.ts says why), so every attempt,
 * takeover and resume of one refund asks under the same key and the
 * provider refunds once. "refund:" keeps it apart from every charge's key:
 * a provider's idempotency keys are one namespace for all its endpoints.
 */
export function refundProviderKey(request: KeyedRequest, generation: number): string {
  const digest = createHash("sha256")
    .update(request.key)
    .update("\n")
    .update(request.fingerprint)
    .digest("base64url");
  const suffix = generation === 0 ? "" : `.${generation}`;
  return `${paymentProviderKeyPrefix(request.scope)}refund:${digest}${suffix}`;
}
