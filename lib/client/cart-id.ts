/**
 * A cart's id: minted on the cart's first Pay and sent with every intent of
 * that cart. Not an Idempotency-Key, and made to look different from one: a
 * cart outlives its intents (a decline, then another card), while a key
 * belongs to exactly one.
 */

export const CART_ID_PREFIX = "cart_";

/** 41 characters, well inside the 100 the server's checkout schema accepts (lib/orders/cart.ts). */
export function newCartId(): string {
  return `${CART_ID_PREFIX}${crypto.randomUUID()}`;
}
