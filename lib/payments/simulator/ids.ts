import { randomBytes } from "node:crypto";

/**
 * Object ids in Stripe's style: a type prefix and random base62 characters
 * (`pi_…`, `ch_…`, `re_…`, `req_…`). They are made before the ledger
 * transaction, so the payment intent can name its charge and the charge its
 * intent in one go.
 */
const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

export function randomBase62(length: number): string {
  let text = "";
  // Rejection sampling keeps every character equally likely (256 is not a multiple of 62).
  while (text.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && text.length < length) text += ALPHABET[byte % 62];
    }
  }
  return text;
}

export function newId(prefix: "pi" | "ch" | "re" | "req" | "evt" | "we"): string {
  return `${prefix}_${randomBase62(prefix === "req" ? 14 : 24)}`;
}

export function clientSecretFor(paymentIntentId: string): string {
  return `${paymentIntentId}_secret_${randomBase62(25)}`;
}

/** A webhook endpoint's signing secret, in Stripe's form. */
export function newWebhookSecret(): string {
  return `whsec_${randomBase62(32)}`;
}
