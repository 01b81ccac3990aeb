import { rateLimitedResponse } from "@/lib/http/request-problems";
import type { RateLimit } from "@/lib/limits/rate-limit";

/**
 * Every request to the strategy lab counts against its account's window
 * (LAB_RATE_LIMIT): starting a storm, reading its report, and each request
 * of a storm to the lab's own strategies, every one of which charges the
 * payment provider with no key to stop it. Counted once the caller is
 * known, before anything else is read or asked.
 */
export async function refusedByLabLimit(
  limit: RateLimit,
  accountId: string,
): Promise<Response | undefined> {
  const decision = await limit.consume(accountId);
  if (decision.allowed) return undefined;
  return rateLimitedResponse(
    `This account sent the lab more requests than its rate limit allows. Retry after ${decision.retryAfterSeconds} s.`,
    decision.retryAfterSeconds,
  );
}
