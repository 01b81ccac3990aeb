import { ProviderReadsLimited, providerReadsLimitedDetail } from "@/lib/ledger/provider-reads";
import { providerUnreachable } from "@/lib/ledger/provider-tally";
import { PaymentLookupError } from "@/lib/payments/provider";

/**
 * A key page's lookup at the provider that could not be made, as the page
 * and GET /api/keys/{key} show it: the provider unreachable, or the
 * account's provider reads spent (the API then answers 429 with
 * retryAfterSeconds). Anything else is not a lookup's failure: rethrown.
 */
export function providerReadFailure(error: unknown): {
  available: false;
  detail: string;
  retryAfterSeconds?: number;
} {
  if (error instanceof PaymentLookupError) return providerUnreachable(error);
  if (error instanceof ProviderReadsLimited)
    return {
      available: false,
      detail: providerReadsLimitedDetail(error.retryAfterSeconds),
      retryAfterSeconds: error.retryAfterSeconds,
    };
  throw error;
}
