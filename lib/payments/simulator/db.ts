import pg from "pg";

/**
 * The simulator's own connection pool: plain `pg`, not OncePay's Prisma
 * client, because it is a separate service that merely may share a server.
 *
 * On the embedded database (PGlite behind its socket server) it uses ONE
 * connection whatever was asked. PGlite runs a single session, and its
 * socket server queues each connection's protocol messages separately, so
 * two busy connections can interleave one query's Parse and Bind and fail
 * with "unnamed prepared statement does not exist" (after which the socket
 * server stops answering at all). One connection costs nothing there, since
 * PGlite runs one statement at a time anyway.
 */
export async function openSimulatorPool(databaseUrl: string, max: number): Promise<pg.Pool> {
  const probe = new pg.Client({ connectionString: databaseUrl });
  await probe.connect();
  let embedded: boolean;
  try {
    const { rows } = await probe.query<{ version: string }>("SELECT version()");
    embedded = /PGlite/i.test(rows[0]?.version ?? "");
  } finally {
    await probe.end();
  }
  const pool = new pg.Pool({ connectionString: databaseUrl, max: embedded ? 1 : max, application_name: "oncepay-payment-simulator" });
  // An idle connection that the server drops must not crash the process; the
  // next query simply gets a fresh connection.
  pool.on("error", () => undefined);
  return pool;
}

export async function inTransaction<T>(pool: pg.Pool, work: (tx: pg.PoolClient) => Promise<T>): Promise<T> {
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
      (rollbackError: unknown) => (rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError))),
    );
    tx.release(broken);
    throw error;
  }
}
