import { createApiAccount } from "@/lib/auth/accounts";
import { jsonResponse } from "@/lib/http/json";
import { getServices } from "@/lib/services";

/**
 * POST /api/accounts: a demo account for API clients. The token is shown once;
 * only its hash is kept, so a lost token means a new account.
 */
export async function createAccount(): Promise<Response> {
  const account = await createApiAccount(getServices().db);
  return jsonResponse(201, account, { "Cache-Control": "no-store" });
}
