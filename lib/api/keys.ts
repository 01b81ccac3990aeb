import { authenticate, authFailureResponse } from "@/lib/auth/accounts";
import { jsonResponse } from "@/lib/http/json";
import { problemResponse, problemType } from "@/lib/http/problem";
import { rateLimitedResponse } from "@/lib/http/request-problems";
import { inspectKey } from "@/lib/ledger/key-inspection";
import { getServices } from "@/lib/services";

/**
 * GET /api/keys/{key}: one of the caller's keys, inspected (lib/ledger/key-inspection.ts).
 * The key is the path segment, percent-encoded as any segment is.
 */
export async function getKey(request: Request, key: string): Promise<Response> {
  const { authenticator, db, providerReadsFor } = getServices();
  const auth = await authenticate(authenticator, request);
  if (!auth.ok) return authFailureResponse(auth.failure);
  const { accountId } = auth.caller;
  const inspection = await inspectKey(db, providerReadsFor(accountId), accountId, key);
  if (!inspection) {
    // The same answer for a key of another account as for one that never was.
    return problemResponse({
      type: problemType("idempotency-key-not-found"),
      title: "Idempotency key not found",
      status: 404,
      detail: "This account has no such Idempotency-Key (or it expired and was deleted).",
    });
  }
  // The account's provider reads ran out: an API client is told when to come back, not handed half an answer.
  if (!inspection.provider.available && inspection.provider.retryAfterSeconds !== undefined)
    return rateLimitedResponse(inspection.provider.detail, inspection.provider.retryAfterSeconds);
  return jsonResponse(200, inspection, { "Cache-Control": "private, no-store" });
}
