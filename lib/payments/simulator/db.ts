import pg from "pg";

/**
 * The simulator's own connection pool: plain `pg`, not OncePay's Prisma
 * client, because it is a separate service that merely may share a server.
 * Its size is the caller's to choose: whoever starts the simulator on the
 * embedded database asks for one connection (see spawnPaymentSimulator).
 */
export function openSimulatorPool(databaseUrl: string, max: number): pg.Pool {
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max,
    application_name: "oncepay-payment-simulator",
  });
  // An idle connection that the server drops must not crash the process; the
  // next query simply gets a fresh connection.
  pool.on("error", () => undefined);
  return pool;
}
