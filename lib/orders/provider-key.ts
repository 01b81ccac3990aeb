/**
 * The idempotency key the payment provider sees for a checkout. It names the
 * key row, not just the client's Idempotency-Key: the row is the same for
 * every attempt, takeover and recovery of one request, so they all get the
 * first charge back; but once a key expires (TTL) the same Idempotency-Key is
 * a new request with a new row, and it must be a new charge rather than the
 * provider's replay of the old one. The account is part of it so that, at the
 * provider, two shoppers' charges can never meet.
 */
export function paymentProviderKey(accountId: string, keyId: string): string {
  return `${paymentProviderKeyPrefix(accountId)}${keyId}`;
}

/** What all of one account's provider keys start with, to find its charges at the provider. */
export function paymentProviderKeyPrefix(accountId: string): string {
  return `oncepay:${accountId}:`;
}
