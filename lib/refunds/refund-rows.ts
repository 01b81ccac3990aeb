import type { PgTransaction } from "@oncepay/idempotency/pg";
import type { Prisma } from "@/lib/generated/prisma/client";
import { sql, type Sql } from "@/lib/db/sql";

/**
 * The refund's statements, run inside the engine's transaction of whichever
 * store the shop runs on: plain SQL either way, since the reservation is a
 * row lock and arithmetic on one row, which Prisma's models cannot say.
 */
export type RunStatement = <Row>(statement: Sql) => Promise<Row[]>;

export const pgStatements =
  (tx: PgTransaction): RunStatement =>
  async <Row>(statement: Sql) =>
    (await tx.query(statement.text, statement.values)).rows as Row[];

export const prismaStatements =
  (tx: Prisma.TransactionClient): RunStatement =>
  <Row>(statement: Sql) =>
    tx.$queryRaw<Row[]>(statement);

/** An order's payment, as a refund reads it. */
export interface RefundablePayment {
  paymentId: string;
  provider: string;
  providerPaymentId: string;
  amount: number;
  refundedAmount: number;
  currency: string;
}

/**
 * The caller's order's successful payment, locked until the phase commits:
 * refunds of one order queue here, each deciding on what the ones before it
 * reserved. None for another account's order, a declined one, or no order.
 */
export async function lockPayment(
  run: RunStatement,
  accountId: string,
  orderId: string,
): Promise<RefundablePayment | undefined> {
  const [payment] = await run<RefundablePayment>(sql`
    SELECT p.id::text AS "paymentId", p.provider, p.provider_payment_id AS "providerPaymentId",
           p.amount, p.refunded_amount AS "refundedAmount", p.currency
      FROM orders o JOIN payments p ON p.order_id = o.id
     WHERE o.id = ${orderId}::uuid AND o.account_id = ${accountId}::uuid AND p.status = 'succeeded'
       FOR UPDATE OF p`);
  return payment;
}

export interface NewRefund {
  id: string;
  accountId: string;
  orderId: string;
  keyId: string;
  idempotencyKey: string;
  amount: number;
  providerKey: string;
}

/**
 * Holds `amount` of the locked payment for the refund, and writes the
 * refund, pending, in one statement. The CHECK on refunded_amount refuses
 * it, should the caller not have checked what is left.
 */
export async function reserveRefund(
  run: RunStatement,
  payment: RefundablePayment,
  refund: NewRefund,
): Promise<{ createdAt: Date }> {
  const [row] = await run<{ created_at: Date }>(sql`
    WITH reserved AS (
      UPDATE payments SET refunded_amount = refunded_amount + ${refund.amount}::int
       WHERE id = ${payment.paymentId}::uuid
      RETURNING id, currency, provider)
    INSERT INTO refunds (id, account_id, order_id, payment_id, idempotency_key_id, idem_key,
                         amount, currency, provider, provider_key)
    SELECT ${refund.id}::uuid, ${refund.accountId}::uuid, ${refund.orderId}::uuid, reserved.id,
           ${refund.keyId}::uuid, ${refund.idempotencyKey}, ${refund.amount}::int,
           reserved.currency, reserved.provider, ${refund.providerKey}
      FROM reserved
    RETURNING created_at`);
  if (!row) throw new Error(`Payment ${payment.paymentId} vanished while it was locked`);
  return { createdAt: new Date(row.created_at) };
}

/**
 * Records the provider's refund, unless that provider refund is already
 * recorded (under an earlier key row: the key was reused after its time to
 * live, for the same refund, and the provider answered with the old one).
 * Returns whether it recorded it.
 */
export async function recordRefunded(
  run: RunStatement,
  refundId: string,
  providerRefundId: string,
  providerKey: string,
): Promise<boolean> {
  const rows = await run<{ id: string }>(sql`
    UPDATE refunds SET status = 'succeeded', provider_refund_id = ${providerRefundId},
                       provider_key = ${providerKey}, completed_at = clock_timestamp()
     WHERE id = ${refundId}::uuid AND status = 'pending'
       AND NOT EXISTS (SELECT FROM refunds AS recorded
                        WHERE recorded.provider = refunds.provider
                          AND recorded.provider_refund_id = ${providerRefundId})
    RETURNING id::text`);
  return rows.length === 1;
}

/**
 * The provider refused the refund, or answered with one already recorded:
 * it is kept as refused, with the code, and its amount goes back to the
 * payment, to be refunded by another request.
 */
export async function recordRefused(
  run: RunStatement,
  refundId: string,
  refusalCode: string,
): Promise<void> {
  await run(sql`
    WITH refused AS (
      UPDATE refunds SET status = 'refused', refusal_code = ${refusalCode}, completed_at = clock_timestamp()
       WHERE id = ${refundId}::uuid AND status = 'pending'
      RETURNING payment_id, amount)
    UPDATE payments SET refunded_amount = payments.refunded_amount - refused.amount
      FROM refused WHERE payments.id = refused.payment_id
    RETURNING payments.id`);
}
