import { randomUUID } from "node:crypto";
import { sql, type GatedRows } from "@/lib/db/sql";
import type { OrderSource } from "@/lib/generated/prisma/enums";
import type { StoredResponse } from "@/lib/idempotency/stored-response";
import { problemType, PROBLEM_CONTENT_TYPE } from "@/lib/http/problem-type";
import type { PricedCart } from "@/lib/orders/cart";
import { orderLocation, orderView } from "@/lib/orders/order-view";
import type { ChargeResult } from "@/lib/payments/provider";

/**
 * What one charge produces: a paid order with its items and payment, or a
 * declined payment alone, and the response to send (and, under a key, to
 * store). The rows are CTEs for one statement: the checkout's key completes
 * in that same statement (PostgresIdempotencyStore.completeKey), and the
 * lab's strategies write them by themselves (writeRows) or in their own
 * transaction.
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

export interface ChargeWrite {
  response: StoredResponse;
  rows: GatedRows;
}

export function chargeWrite(record: ChargeRecord): ChargeWrite {
  return record.charge.status === "succeeded" ? paidOrderWrite(record) : declineWrite(record);
}

/**
 * The order, its items and its payment. Its id and time are minted here
 * rather than by the database, so the response is whole before anything is
 * written, and the key can store it in the statement that writes the order.
 * The time is the order's label (shown, and sorted by), never compared with
 * a lease, so this instance's clock may set it.
 */
function paidOrderWrite({
  accountId,
  keyId,
  idempotencyKey,
  source,
  providerKey,
  cart,
  charge,
  provider,
}: ChargeRecord): ChargeWrite {
  const order = {
    id: randomUUID(),
    status: "paid" as const,
    idemKey: idempotencyKey,
    source,
    cartId: cart.cartId,
    currency: cart.currency,
    totalAmount: cart.total,
    createdAt: new Date(),
    items: cart.lines.map((line) => ({
      sku: line.product.sku,
      name: line.product.name,
      unitAmount: line.product.unitAmount,
      quantity: line.quantity,
    })),
    payment: {
      providerPaymentId: charge.providerPaymentId,
      status: "succeeded" as const,
      paymentMethod: cart.paymentMethod,
    },
  };
  const rows: GatedRows = (gate) => sql`new_order AS (
      INSERT INTO orders (id, account_id, idempotency_key_id, idem_key, source, cart_id, status, currency, total_amount, created_at)
      SELECT ${order.id}::uuid, ${accountId}::uuid, ${keyId}::uuid, ${idempotencyKey}, ${source}::order_source, ${cart.cartId}, 'paid', ${cart.currency}, ${cart.total}::int, ${order.createdAt}::timestamptz
        FROM ${gate}
      RETURNING id
    ), new_items AS (
      INSERT INTO order_items (order_id, sku, name, unit_amount, quantity)
      SELECT new_order.id, line.sku, line.name, line.unit_amount, line.quantity
        FROM new_order, unnest(${order.items.map((item) => item.sku)}::text[], ${order.items.map((item) => item.name)}::text[],
                               ${order.items.map((item) => item.unitAmount)}::int[], ${order.items.map((item) => item.quantity)}::int[])
                        AS line(sku, name, unit_amount, quantity)
    ), new_payment AS (
      INSERT INTO payments (account_id, order_id, idempotency_key_id, provider, provider_payment_id, provider_key, payment_method, status, amount, currency)
      SELECT ${accountId}::uuid, new_order.id, ${keyId}::uuid, ${provider}, ${charge.providerPaymentId}, ${providerKey}, ${cart.paymentMethod}, 'succeeded', ${cart.total}::int, ${cart.currency}
        FROM new_order
    )`;
  return {
    response: {
      status: 201,
      headers: { "Content-Type": "application/json", Location: orderLocation(order.id) },
      body: orderView(order),
    },
    rows,
  };
}

function declineWrite({
  accountId,
  keyId,
  providerKey,
  cart,
  charge,
  provider,
}: ChargeRecord): ChargeWrite {
  if (charge.status !== "declined") throw new Error("declineWrite called for a successful charge");
  const rows: GatedRows = (gate) => sql`declined_payment AS (
      INSERT INTO payments (account_id, idempotency_key_id, provider, provider_payment_id, provider_key, payment_method, status, amount, currency, decline_code)
      SELECT ${accountId}::uuid, ${keyId}::uuid, ${provider}, ${charge.providerPaymentId}, ${providerKey}, ${cart.paymentMethod}, 'declined', ${cart.total}::int, ${cart.currency}, ${charge.declineCode}
        FROM ${gate}
    )`;
  return {
    response: {
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
    },
    rows,
  };
}
