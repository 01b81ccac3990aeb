import { z } from "zod";
import type { FieldError } from "@oncepay/idempotency";
import { parseWith } from "@/lib/http/field-errors";
import { CATALOG, findProduct, productSchema, type Product } from "@/lib/orders/catalog";
import {
  DEFAULT_PAYMENT_METHOD,
  TEST_PAYMENT_METHODS,
  type TestPaymentMethod,
} from "@/lib/payments/provider";

// A generous cart, but bounded: the body is stored and fingerprinted.
const MAX_LINES = 50;
const MAX_QUANTITY = 99;

export const checkoutRequestSchema = z.object({
  cartId: z.string().trim().min(1, "cartId must not be empty").max(100),
  items: z
    .array(
      z.object({
        sku: z.string().min(1).max(64),
        quantity: z.number().int("quantity must be a whole number").min(1).max(MAX_QUANTITY),
      }),
    )
    .min(1, "The cart is empty: add at least one item")
    .max(MAX_LINES),
  paymentMethod: z
    .enum(TEST_PAYMENT_METHODS, {
      error: `paymentMethod must be one of: ${TEST_PAYMENT_METHODS.join(", ")}`,
    })
    .default(DEFAULT_PAYMENT_METHOD),
});

export type CheckoutRequest = z.infer<typeof checkoutRequestSchema>;

export interface PricedLine {
  product: Product;
  quantity: number;
  amount: number;
}

export interface PricedCart {
  cartId: string;
  lines: PricedLine[];
  currency: string;
  total: number;
  paymentMethod: TestPaymentMethod;
}

/**
 * A priced cart as the checkout stores it with its key when the charge
 * begins, read back by whoever resumes the request.
 */
export const pricedCartSchema: z.ZodType<PricedCart> = z.object({
  cartId: z.string(),
  lines: z.array(
    z.object({
      product: productSchema,
      quantity: z.number().int().min(1),
      amount: z.number().int(),
    }),
  ),
  currency: z.string(),
  total: z.number().int(),
  paymentMethod: z.enum(TEST_PAYMENT_METHODS),
});

/** Validates a checkout body and prices it from our own catalog. */
export type CheckoutParseResult =
  | {
      ok: true;
      body: PricedCart;
      /**
       * The request as the checkout reads it, every field it does not know
       * dropped: what the key keeps for a resume (which parses it again), so
       * a client cannot make us keep kilobytes of extras for a day. The
       * fingerprint still covers the body as sent.
       */
      request: CheckoutRequest;
    }
  | { ok: false; detail: string; errors: FieldError[] };

export function parseCheckoutRequest(json: unknown): CheckoutParseResult {
  const read = parseWith(checkoutRequestSchema, json);
  if (!read.ok) return read;
  const sent = read.value;

  const unknown = sent.items.filter((item) => !findProduct(item.sku)).map((item) => item.sku);
  if (unknown.length > 0) {
    return {
      ok: false,
      detail: `Unknown sku: ${unknown.join(", ")}. See GET /api/products for what is on sale.`,
      errors: unknown.map((sku) => ({ path: "items.sku", message: `unknown sku "${sku}"` })),
    };
  }

  const lines = mergeLines(sent.items);
  // The cap holds per product: lines of one product merge into one line.
  const overCap = lines.filter((line) => line.quantity > MAX_QUANTITY);
  if (overCap.length > 0) {
    const errors = overCap.map((line) => ({
      path: "items.quantity",
      message: `${line.quantity} of "${line.product.sku}" in all: at most ${MAX_QUANTITY} of one product`,
    }));
    return { ok: false, detail: errors.map((e) => `${e.path}: ${e.message}`).join("; "), errors };
  }
  return {
    ok: true,
    body: {
      cartId: sent.cartId,
      lines,
      currency: CATALOG[0]!.currency,
      total: lines.reduce((sum, line) => sum + line.amount, 0),
      paymentMethod: sent.paymentMethod,
    },
    request: sent,
  };
}

// The same sku listed twice is one line with both quantities.
function mergeLines(items: { sku: string; quantity: number }[]): PricedLine[] {
  const quantities = new Map<string, number>();
  for (const item of items)
    quantities.set(item.sku, (quantities.get(item.sku) ?? 0) + item.quantity);
  return [...quantities].map(([sku, quantity]) => {
    const product = findProduct(sku)!;
    return { product, quantity, amount: product.unitAmount * quantity };
  });
}
