import type { PgTransaction } from "@oncepay/idempotency/pg";
import type { Prisma } from "@/lib/generated/prisma/client";
import { run } from "@/lib/db/sql";
import { orderRowsUnlessRecordedStatement } from "@/lib/orders/order-rows-sql";
import type { OrderRows } from "@/lib/orders/record";

/**
 * How the checkout's last phase writes a charge's rows inside the engine's
 * transaction (`Tx`, its store's), which commits them with the completed
 * key: one writer per store, since each store hands the phase its own kind
 * of transaction.
 */
export interface OrderRowsWriter<Tx> {
  /**
   * Writes the rows, unless the database already records their provider
   * payment (under another key row): one provider payment is recorded at
   * most once. Returns whether it wrote them. The unique index on
   * `payments (provider, provider_payment_id)` refuses the rare loser of two
   * such writes at once, which rolls its phase back.
   */
  writeUnlessRecorded(tx: Tx, rows: OrderRows): Promise<boolean>;
}

/** For pgStore: one statement, so one round trip, on the transaction's client. */
export const sqlOrderRows: OrderRowsWriter<PgTransaction> = {
  async writeUnlessRecorded(tx, rows) {
    const [result] = await run<{ written: boolean }>(tx, orderRowsUnlessRecordedStatement(rows));
    return result?.written === true;
  },
};

/** For prismaStore: the models' own queries, the order with its items and payment by nested create. */
export const prismaOrderRows: OrderRowsWriter<Prisma.TransactionClient> = {
  async writeUnlessRecorded(tx, { order, payment }) {
    const recorded = await tx.payment.findUnique({
      where: {
        provider_providerPaymentId: {
          provider: payment.provider,
          providerPaymentId: payment.providerPaymentId,
        },
      },
      select: { id: true },
    });
    if (recorded) return false;
    if (order === null) await tx.payment.create({ data: payment, select: { id: true } });
    else
      await tx.order.create({
        data: {
          ...order,
          items: { create: order.items },
          payment: { create: payment },
          ...(order.status === "paid" && { shipment: { create: {} } }),
        },
        select: { id: true },
      });
    return true;
  },
};
