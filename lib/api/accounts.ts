import { createApiAccount } from "@/lib/auth/accounts";
import { clientAddress } from "@/lib/http/client-address";
import { jsonResponse } from "@/lib/http/json";
import { rateLimitedResponse } from "@/lib/http/request-problems";
import { serverEnv } from "@/lib/env";
import { getServices } from "@/lib/services";

/**
 * POST /api/accounts: a demo account for API clients. The token is shown once;
 * only its hash is kept, so a lost token means a new account. Each address
 * may create a limited number a minute (shared by all instances), so no
 * caller can fill the accounts table.
 */
export async function createAccount(request: Request): Promise<Response> {
  const { db, accountLimit } = getServices();
  const address = clientAddress(request.headers, serverEnv().TRUSTED_PROXIES);
  const limit = await accountLimit.consume(address);
  if (!limit.allowed) {
    return rateLimitedResponse(
      `This address created more accounts than its rate limit allows. Retry after ${limit.retryAfterSeconds} s.`,
      limit.retryAfterSeconds,
    );
  }
  const account = await createApiAccount(db);
  return jsonResponse(201, account, { "Cache-Control": "no-store" });
}
