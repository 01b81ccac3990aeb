import type { Transaction } from "@/lib/db/transaction";
import type { OrderSource } from "@/lib/generated/prisma/enums";
import type { StoredResponse } from "@/lib/idempotency/stored-response";
import { problemType, PROBLEM_CONTENT_TYPE } from "@/lib/http/problem-type";
import type { PricedCart } from "@/lib/orders/cart";
import { orderLocation, orderView } from "@/lib/orders/order-view";
import type { ChargeResult } from "@/lib/payments/provider";

/**
 * Writes what one charge produced: a paid order with its items and payment,
 * or a declined payment alone. Each returns the response to send (and, under
 * a key, to store).
 */
export interface ChargeRecord {
  accountId: string;
  /** The key row the charge ran under; null for the lab's strategies, which keep keys of their own, or none. */
  keyId: string | null;
  /** The client's Idempotency-Key, kept with the order after the key row is reaped; null when none was sent. */
  idempotencyKey: string | null;
  /** Which code path writes it: the checkout, or one of the lab's broken strategies. */
  source: OrderSource;
  /** The idempotency key the provider saw: the handle to find the charge there again. */
  providerKey: string;
  cart: PricedCart;
  charge: ChargeResult;
  provider: string;
}

export async function recordPaidOrder(tx: Transaction, { accountId, keyId, idempotencyKey, source, providerKey, cart, charge, provider }: ChargeRecord): Promise<StoredResponse> {
  // One statement, one round trip: the order, its items and its payment.
  // Everything the response shows is known here but the order's id and time.
  const { rows } = await tx.query<{ id: string; created_at: Date }>(
    `WITH new_order AS (
       INSERT INTO orders (account_id, idempotency_key_id, idem_key, source, cart_id, status, currency, total_amount)
       VALUES ($1, $2, $3, $4, $5, 'paid', $6, $7)
       RETURNING id, created_at
     ), new_items AS (
       INSERT INTO order_items (order_id, sku, name, unit_amount, quantity)
       SELECT new_order.id, line.sku, line.name, line.unit_amount, line.quantity
         FROM new_order, unnest($8::text[], $9::text[], $10::int[], $11::int[]) AS line(sku, name, unit_amount, quantity)
     ), new_payment AS (
       INSERT INTO payments (account_id, order_id, idempotency_key_id, provider, provider_payment_id, provider_key, payment_method, status, amount, currency)
       SELECT $1, new_order.id, $2, $12, $13, $14, $15, 'succeeded', $7, $6 FROM new_order
     )
     SELECT id, created_at FROM new_order`,
    [
      accountId,
      keyId,
      idempotencyKey,
      source,
      cart.cartId,
      cart.currency,
      cart.total,
      cart.lines.map((line) => line.product.sku),
      cart.lines.map((line) => line.product.name),
      cart.lines.map((line) => line.product.unitAmount),
      cart.lines.map((line) => line.quantity),
      provider,
      charge.providerPaymentId,
      providerKey,
      cart.paymentMethod,
    ],
  );
  const { id, created_at: createdAt } = rows[0]!;
  const order = {
    id,
    status: "paid" as const,
    idemKey: idempotencyKey,
    source,
    cartId: cart.cartId,
    currency: cart.currency,
    totalAmount: cart.total,
    createdAt,
    items: cart.lines.map((line) => ({ sku: line.product.sku, name: line.product.name, unitAmount: line.product.unitAmount, quantity: line.quantity })),
    payment: { providerPaymentId: charge.providerPaymentId, status: "succeeded" as const, paymentMethod: cart.paymentMethod },
  };
  return {
    status: 201,
    headers: { "Content-Type": "application/json", Location: orderLocation(order.id) },
    body: orderView(order),
  };
}

export async function recordDecline(tx: Transaction, { accountId, keyId, providerKey, cart, charge, provider }: ChargeRecord): Promise<StoredResponse> {
  if (charge.status !== "declined") throw new Error("recordDecline called for a successful charge");
  await tx.query(
    `INSERT INTO payments (account_id, idempotency_key_id, provider, provider_payment_id, provider_key, payment_method, status, amount, currency, decline_code)
     VALUES ($1, $2, $3, $4, $5, $6, 'declined', $7, $8, $9)`,
    [accountId, keyId, provider, charge.providerPaymentId, providerKey, cart.paymentMethod, cart.total, cart.currency, charge.declineCode],
  );
  return {
    status: 402,
    headers: { "Content-Type": PROBLEM_CONTENT_TYPE },
    body: {
      type: problemType("payment-declined"),
      title: "Payment declined",
      status: 402,
      detail: `${charge.message} Nothing was charged. Try another payment method; that is a new checkout with a new key.`,
      declineCode: charge.declineCode,
      paymentId: charge.providerPaymentId,
    },
  };
}
