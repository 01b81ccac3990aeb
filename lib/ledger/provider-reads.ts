import type { RateLimit } from "@/lib/limits/rate-limit";
import type { PaymentRecords } from "@/lib/payments/provider";

/**
 * One account's reads of the payment provider's records. The provider is
 * the shop's, shared with every checkout: past its own rate limit it
 * refuses the shop's charges too. So what one account's reads can make it
 * ask is bounded (PROVIDER_READ_RATE_LIMIT a window): each reader reserves
 * the lookups it is about to make (a search, a list of charges) before it
 * makes them, all of them or none.
 */
export interface ProviderReads {
  readonly records: PaymentRecords;
  /** Spends `lookups` of the account's window; throws ProviderReadsLimited, having asked nothing, when they do not fit. */
  reserve(lookups: number): Promise<void>;
}

/** The account has asked the provider all its window allows. */
export class ProviderReadsLimited extends Error {
  constructor(readonly retryAfterSeconds: number) {
    super(`provider reads limited for ${retryAfterSeconds} s`);
    this.name = "ProviderReadsLimited";
  }
}

export function providerReadsOf(
  records: PaymentRecords,
  limit: RateLimit,
  accountId: string,
): ProviderReads {
  return {
    records,
    async reserve(lookups) {
      const decision = await limit.consume(accountId, lookups);
      if (!decision.allowed) throw new ProviderReadsLimited(decision.retryAfterSeconds);
    },
  };
}

/** What a client is told when its reads are refused: the same words on every endpoint and page. */
export function providerReadsLimitedDetail(retryAfterSeconds: number): string {
  return `This account asked the payment provider for its records more often than its rate limit allows. Retry after ${retryAfterSeconds} s.`;
}
