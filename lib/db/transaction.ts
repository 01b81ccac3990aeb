import type pg from "pg";

/**
 * One transaction on a plain `pg` pool: what the lab's strategies (a key row
 * of their own with the order) and the payment simulator use. `Transaction`
 * is its handle: code that writes inside another module's transaction is
 * given one, and uses it, never the pool. (The checkout needs none: its
 * order and completed key are one statement, lib/db/sql.ts.)
 */
export type Transaction = pg.PoolClient;

export async function inTransaction<T>(
  pool: pg.Pool,
  work: (tx: Transaction) => Promise<T>,
): Promise<T> {
  const tx = await pool.connect();
  try {
    await tx.query("BEGIN");
    const result = await work(tx);
    await tx.query("COMMIT");
    tx.release();
    return result;
  } catch (error) {
    // If even the ROLLBACK fails the connection is broken: destroy it rather
    // than hand it back to the pool.
    const broken = await tx.query("ROLLBACK").then(
      () => undefined,
      (rollbackError: unknown) =>
        rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError)),
    );
    tx.release(broken);
    throw error;
  }
}
