import { authenticate, authFailureResponse } from "@/lib/auth/accounts";
import { jsonResponse } from "@/lib/http/json";
import { problemResponse, problemType } from "@/lib/http/problem";
import { rateLimitedResponse } from "@/lib/http/request-problems";
import { providerReadsLimitedDetail } from "@/lib/ledger/provider-reads";
import { countPurchases } from "@/lib/ledger/purchase-count";
import { purchaseView } from "@/lib/ledger/purchase-view";
import { getServices } from "@/lib/services";

/**
 * GET /api/purchases/{cartId}: the caller's orders of one cart and what the
 * payment provider charged for them (lib/ledger/purchase-count.ts). The
 * shop asks it once a payment is answered, so that what it says of the
 * purchase (charged once, or the damage) comes from the records.
 */
export async function getPurchase(request: Request, cartId: string): Promise<Response> {
  const { authenticator, db, providerReadsFor } = getServices();
  const auth = await authenticate(authenticator, request);
  if (!auth.ok) return authFailureResponse(auth.failure);
  const { accountId } = auth.caller;

  const counted =
    cartId.length > 0 && cartId.length <= CART_ID_MAX_LENGTH
      ? (await countPurchases(db, providerReadsFor(accountId), accountId, [cartId])).get(cartId)
      : undefined;
  if (!counted || counted.summary.orders === 0) {
    // The same answer for another account's cart as for one that never was.
    return problemResponse(
      {
        type: problemType("purchase-not-found"),
        title: "Purchase not found",
        status: 404,
        detail: "This account has no order for that cart.",
      },
      PRIVATE,
    );
  }
  const { charges } = counted.summary;
  // The account's provider reads ran out: an API client is told when to come back, not handed half an answer.
  if (charges.kind === "limited")
    return rateLimitedResponse(
      providerReadsLimitedDetail(charges.retryAfterSeconds),
      charges.retryAfterSeconds,
    );
  return jsonResponse(200, purchaseView(counted), PRIVATE);
}

const PRIVATE = { "Cache-Control": "private, no-store" };
// The checkout accepts cart ids of at most this many characters (lib/orders/cart.ts): no order has a longer one.
const CART_ID_MAX_LENGTH = 100;
