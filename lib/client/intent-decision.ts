/**
 * When a checkout intent ends, and which intent a press of Pay sends: the
 * rules that decide whether a request reuses an Idempotency-Key or gets a new
 * one, as pure functions (the intent runner in intent-runner.ts only
 * applies them to sessionStorage).
 *
 * Reusing a key for a new purchase would replay the old result instead of
 * paying; making a new key for an unfinished one could charge twice. So:
 * the same key while the outcome is unknown, a new key once it is known.
 */
import type { Cart, PaymentMethod } from "./api-types";
import { newIdempotencyKey, type CheckoutResult } from "./checkout";
import type { RefundResult } from "./refund";
import { samePayload, type StoredIntent } from "./intent-store";

/**
 * Whether a run's result ends the intent. Paid, declined (the server stored
 * the 402, so resending the key only replays it) and refused (400, 401, 422,
 * …: the same request cannot succeed) end it; the client giving up with the
 * outcome unknown does not, because the payment may have gone through. A
 * refund's results end the same way (lib/client/refund.ts).
 */
export function endsIntent(result: CheckoutResult | RefundResult): boolean {
  return result.kind !== "failed" || !result.outcomeUnknown;
}

/** The intent kept after the client gave up with the outcome unknown: the next Pay of this cart resends its key. */
export function markUnresolved(intent: StoredIntent): StoredIntent {
  return { ...intent, state: "unresolved" };
}

export interface PayRequestPayload {
  cart: Cart;
  paymentMethod: PaymentMethod;
}

/**
 * The intent a press of Pay sends. `unfinished` is what is stored for the
 * cart (nothing once an intent ended): if it is the very same request, it is
 * resent with its key and its attempts so far; otherwise this is a new intent
 * with a new key, made here, before its first attempt.
 */
export function intentForPay(
  unfinished: StoredIntent | null,
  { cart, paymentMethod }: PayRequestPayload,
  now: number,
  newKey: () => string = newIdempotencyKey,
): StoredIntent {
  if (
    unfinished &&
    unfinished.cartId === cart.cartId &&
    samePayload(unfinished, { items: cart.items, paymentMethod })
  )
    return unfinished;
  return {
    cartId: cart.cartId,
    idempotencyKey: newKey(),
    items: cart.items,
    paymentMethod,
    createdAt: now,
    lastRunAt: now,
    state: "sending",
    attempts: [],
  };
}
