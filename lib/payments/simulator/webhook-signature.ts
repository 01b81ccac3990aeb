import { createHmac } from "node:crypto";

/**
 * Stripe's webhook signature: `Stripe-Signature: t=<unix seconds>,v1=<hex>`,
 * where the hex is the HMAC-SHA256, keyed with the endpoint's whole secret
 * (`whsec_…`), of `<t>.<the raw body>`. Each attempt is signed anew with the
 * time it is sent, as Stripe signs each of its retries, so a receiver's
 * tolerance (the SDK's is 300 s) judges the attempt, not the event.
 */
export function signatureHeader(secret: string, payload: string, timestampSeconds: number): string {
  const signature = createHmac("sha256", secret)
    .update(`${timestampSeconds}.${payload}`, "utf8")
    .digest("hex");
  return `t=${timestampSeconds},v1=${signature}`;
}
