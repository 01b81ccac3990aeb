import { sql, type Sql } from "@/lib/db/sql";
import type { OrderRows } from "@/lib/orders/record";

/**
 * A charge's rows as data-modifying CTEs (`name AS (INSERT …)`, comma
 * separated) for one statement. Each selects FROM `gate`, a FROM item with
 * one row or none, so the rows are written exactly when the gate has its
 * row: the checkout's gate (no payment recorded yet), or one that always
 * has one (the lab's strategies).
 */
export function orderRowsSql({ order, payment }: OrderRows, gate: Sql): Sql {
  if (order === null) {
    return sql`declined_payment AS (
      INSERT INTO payments (account_id, idempotency_key_id, provider, provider_payment_id, provider_key, payment_method, status, amount, currency, decline_code)
      SELECT ${payment.accountId}::uuid, ${payment.idempotencyKeyId}::uuid, ${payment.provider}, ${payment.providerPaymentId}, ${payment.providerKey},
             ${payment.paymentMethod}, 'declined', ${payment.amount}::int, ${payment.currency}, ${payment.declineCode}
        FROM ${gate}
    )`;
  }
  const { items } = order;
  // A paid order ships: its shipment is written with it. A pending one ships when it is settled paid.
  const shipment =
    order.status === "paid"
      ? sql`, new_shipment AS (INSERT INTO shipments (order_id) SELECT new_order.id FROM new_order)`
      : sql``;
  return sql`new_order AS (
      INSERT INTO orders (id, account_id, idempotency_key_id, idem_key, source, cart_id, status, currency, total_amount, created_at)
      SELECT ${order.id}::uuid, ${order.accountId}::uuid, ${order.idempotencyKeyId}::uuid, ${order.idemKey}, ${order.source}::order_source,
             ${order.cartId}, ${order.status}::order_status, ${order.currency}, ${order.totalAmount}::int, ${order.createdAt}::timestamptz
        FROM ${gate}
      RETURNING id
    ), new_items AS (
      INSERT INTO order_items (order_id, sku, name, unit_amount, quantity)
      SELECT new_order.id, line.sku, line.name, line.unit_amount, line.quantity
        FROM new_order, unnest(${items.map((item) => item.sku)}::text[], ${items.map((item) => item.name)}::text[],
                               ${items.map((item) => item.unitAmount)}::int[], ${items.map((item) => item.quantity)}::int[])
                        AS line(sku, name, unit_amount, quantity)
    ), new_payment AS (
      INSERT INTO payments (account_id, order_id, idempotency_key_id, provider, provider_payment_id, provider_key, payment_method, status, amount, currency)
      SELECT ${payment.accountId}::uuid, new_order.id, ${payment.idempotencyKeyId}::uuid, ${payment.provider}, ${payment.providerPaymentId},
             ${payment.providerKey}, ${payment.paymentMethod}, ${payment.status}::payment_status, ${payment.amount}::int, ${payment.currency}
        FROM new_order
    )${shipment}`;
}

/** A gate that always has its row. */
const ALWAYS = sql`(SELECT) AS always`;

/** Writes the rows by themselves: one statement, atomic on its own. */
export function orderRowsStatement(rows: OrderRows): Sql {
  return sql`WITH ${orderRowsSql(rows, ALWAYS)} SELECT`;
}

/**
 * Writes the rows unless their provider payment is already recorded, in one
 * statement; answers `written`.
 */
export function orderRowsUnlessRecordedStatement(rows: OrderRows): Sql {
  const { payment } = rows;
  return sql`WITH unrecorded AS (
      SELECT WHERE NOT EXISTS (
        SELECT FROM payments WHERE provider = ${payment.provider} AND provider_payment_id = ${payment.providerPaymentId})
    ), ${orderRowsSql(rows, sql`unrecorded`)}
    SELECT EXISTS (SELECT FROM unrecorded) AS written`;
}
