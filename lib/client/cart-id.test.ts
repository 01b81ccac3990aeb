import { describe, expect, it } from "vitest";
import { checkoutRequestSchema } from "@/lib/orders/cart";
import { newIdempotencyKey } from "./checkout";
import { newCartId } from "./cart-id";

describe("newCartId", () => {
  it("makes a fresh cart_-prefixed id each time, never shaped like an Idempotency-Key", () => {
    const id = newCartId();
    expect(id).toMatch(
      /^cart_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    expect(id).not.toBe(newCartId());
    expect(newIdempotencyKey()).not.toMatch(/^cart_/);
  });

  it("is a cartId the server's checkout schema accepts as it is", () => {
    const cartId = newCartId();
    const parsed = checkoutRequestSchema.safeParse({
      cartId,
      items: [{ sku: "mug-ceramic-350", quantity: 1 }],
      paymentMethod: "pm_card_visa",
    });
    expect(parsed.success && parsed.data.cartId).toBe(cartId);
  });
});
