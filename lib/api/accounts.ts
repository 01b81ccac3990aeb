import { createApiAccount, tooManyAccounts } from "@/lib/auth/accounts";
import { jsonResponse } from "@/lib/http/json";
import { rateLimitedResponse } from "@/lib/http/request-problems";
import { getServices } from "@/lib/services";

/**
 * POST /api/accounts: a demo account for API clients. The token is shown once;
 * only its hash is kept, so a lost token means a new account. Each address
 * may create a limited number a minute (shared by all instances), so no
 * caller can fill the accounts table.
 */
export async function createAccount(request: Request): Promise<Response> {
  const { authenticator } = getServices();
  const limit = await authenticator.admitNewAccount(request);
  if (!limit.allowed) {
    return rateLimitedResponse(tooManyAccounts(limit.retryAfterSeconds), limit.retryAfterSeconds);
  }
  const account = await createApiAccount(authenticator.db);
  return jsonResponse(201, account, { "Cache-Control": "no-store" });
}
