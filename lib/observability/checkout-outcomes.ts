import { assertNever } from "@/lib/assert-never";
import type { Outcome } from "@/lib/idempotency/outcomes";

/**
 * The label values of oncepay_checkout_outcomes_total: one per kind of
 * answer an operator tells apart, coarser than Outcome (every malformed
 * request is `invalid`), and a closed list, so a dashboard can name them all.
 */
export const CHECKOUT_OUTCOMES = [
  "created",
  "replayed",
  "in_flight",
  "fingerprint_mismatch",
  "declined",
  "invalid",
  "unauthenticated",
  "dependency_unavailable",
  "database_unavailable",
  "internal_error",
  "rate_limited",
] as const;

export type CheckoutOutcome = (typeof CHECKOUT_OUTCOMES)[number];

const PAYMENT_DECLINED_STATUS = 402;

/** What a checkout's Outcome counts as. */
export function checkoutOutcomeOf(outcome: Outcome): CheckoutOutcome {
  switch (outcome.kind) {
    case "completed":
      return outcome.stored.status === PAYMENT_DECLINED_STATUS ? "declined" : "created";
    case "replay":
      return "replayed";
    case "in-flight":
    case "lease-lost": // another attempt holds the key now: to the client, the same 409
      return "in_flight";
    case "fingerprint-mismatch":
      return "fingerprint_mismatch";
    case "unauthenticated":
    case "several-sessions":
    case "cross-site": // a session cookie sent by another site: refused as who is asking
      return "unauthenticated";
    case "key-missing":
    case "key-invalid":
    case "key-repeated":
    case "unsupported-media-type":
    case "body-too-large":
    case "body-incomplete":
    case "malformed-json":
    case "unacceptable-json":
    case "invalid-body":
      return "invalid";
    case "rate-limited":
      return "rate_limited";
    case "dependency-unavailable":
    case "dependency-rejected": // the provider refused the request itself (502): still the dependency, not us
      return "dependency_unavailable";
    case "database-unavailable":
      return "database_unavailable";
    case "internal-error":
      return "internal_error";
    default:
      return assertNever(outcome, "checkout outcome");
  }
}
