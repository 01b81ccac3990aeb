import { describe, expect, it } from "vitest";
import { parseCheckoutRequest } from "@/lib/orders/cart";
import { findProduct } from "@/lib/orders/catalog";

describe("parseCheckoutRequest", () => {
  it("prices the cart from the catalog and defaults to the succeeding test card", () => {
    const result = parseCheckoutRequest({
      cartId: "c1",
      items: [
        { sku: "mug-ceramic-350", quantity: 2 },
        { sku: "filters-paper-100", quantity: 1 },
      ],
    });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.body.total).toBe(
      2 * findProduct("mug-ceramic-350")!.unitAmount + findProduct("filters-paper-100")!.unitAmount,
    );
    expect(result.body.currency).toBe("usd");
    expect(result.body.paymentMethod).toBe("pm_card_visa");
  });

  it("ignores any amount the client sends", () => {
    const result = parseCheckoutRequest({
      cartId: "c1",
      amount: 1,
      items: [{ sku: "kettle-gooseneck-1l", quantity: 1, unitAmount: 1 }],
    });
    expect(result.ok && result.body.total).toBe(findProduct("kettle-gooseneck-1l")!.unitAmount);
  });

  it("merges a sku listed twice into one line", () => {
    const result = parseCheckoutRequest({
      cartId: "c1",
      items: [
        { sku: "mug-ceramic-350", quantity: 1 },
        { sku: "mug-ceramic-350", quantity: 2 },
      ],
    });
    expect(result.ok && result.body.lines.map((line) => [line.product.sku, line.quantity])).toEqual(
      [["mug-ceramic-350", 3]],
    );
  });

  it("holds the cap of 99 per product, however many lines name it", () => {
    const at = (quantities: number[]) =>
      parseCheckoutRequest({
        cartId: "c1",
        items: quantities.map((quantity) => ({ sku: "mug-ceramic-350", quantity })),
      });
    expect(at([99, 99])).toMatchObject({
      ok: false,
      errors: [{ path: "items.quantity", message: expect.stringContaining("198") }],
    });
    expect(at([50, 49])).toMatchObject({ ok: true, body: { lines: [{ quantity: 99 }] } });
  });

  it("rejects an unknown sku and names it", () => {
    const result = parseCheckoutRequest({
      cartId: "c1",
      items: [{ sku: "espresso-machine", quantity: 1 }],
    });
    expect(result).toMatchObject({
      ok: false,
      detail: expect.stringContaining("espresso-machine"),
    });
  });

  it.each([
    [{ items: [{ sku: "mug-ceramic-350", quantity: 1 }] }, "cartId"],
    [{ cartId: "c1", items: [] }, "items"],
    [{ cartId: "c1", items: [{ sku: "mug-ceramic-350", quantity: 0 }] }, "items.0.quantity"],
    [{ cartId: "c1", items: [{ sku: "mug-ceramic-350", quantity: 1.5 }] }, "items.0.quantity"],
    [
      {
        cartId: "c1",
        items: [{ sku: "mug-ceramic-350", quantity: 1 }],
        paymentMethod: "pm_card_amex_real",
      },
      "paymentMethod",
    ],
  ])("rejects %o at %s", (body, path) => {
    const result = parseCheckoutRequest(body);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.errors.map((error) => error.path)).toContain(path);
  });
});
