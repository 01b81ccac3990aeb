import { createHash } from "node:crypto";

/** What names one checkout request: who sent it, under which Idempotency-Key, with which body. */
export interface CheckoutRequestIdentity {
  accountId: string;
  idempotencyKey: string;
  /** The request's fingerprint (method, path and canonical body), as its key row keeps it. */
  fingerprint: string;
}

/**
 * The idempotency key the payment provider sees for a checkout. Every
 * attempt, takeover and recovery of one request sends the same one, so they
 * all get the first charge back.
 *
 * It is made from the request, not from its key row, so that it outlives the
 * row: were a row ever lost after its charge (a failover that dropped
 * commits, a restore from an older backup), the retry would claim a new row
 * and still ask under this provider key, and the provider, within its own
 * 24-hour window, would answer with the first charge instead of a second.
 * The fingerprint is part of it so that a key reused after its TTL for a
 * different cart is a new charge; reused for the same cart while the
 * provider still remembers it, the provider answers with the old charge,
 * which the database already records, and the checkout refuses the request
 * (docs/stores.md, "A provider key that outlives its row").
 *
 * `generation` counts the request's provider keys that the provider proved
 * can never charge (a stored 500 it replays, and a search that finds
 * nothing): the request then moves on to the next one. A row lost after
 * such a move walks the same steps again, so it ends on the same key.
 *
 * The client's key may be 255 characters and the provider takes 255, so the
 * key and fingerprint are hashed; the account is kept in clear, so that all
 * of one account's charges can be found at the provider by prefix, and two
 * shoppers' charges can never meet.
 */
export function paymentProviderKey(request: CheckoutRequestIdentity, generation: number): string {
  const digest = createHash("sha256")
    .update(request.idempotencyKey)
    .update("\n")
    .update(request.fingerprint)
    .digest("base64url");
  const suffix = generation === 0 ? "" : `.${generation}`;
  return `${paymentProviderKeyPrefix(request.accountId)}${digest}${suffix}`;
}

/** What all of one account's provider keys start with, to find its charges at the provider. */
export function paymentProviderKeyPrefix(accountId: string): string {
  return `oncepay:${accountId}:`;
}
