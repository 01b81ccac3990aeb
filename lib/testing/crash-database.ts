import pg from "pg";

/**
 * Row counts for tests that restart the app: the database URL can change
 * with each start (the embedded database gets a new port), so each check
 * opens its own short connection.
 */
async function withClient<T>(databaseUrl: string, run: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

export async function rowCountsIn(databaseUrl: string, accountId: string): Promise<{ orders: number; payments: number }> {
  return withClient(databaseUrl, async (client) => {
    const { rows } = await client.query<{ orders: number; payments: number }>(
      `SELECT (SELECT count(*)::int FROM orders WHERE account_id = $1) AS orders,
              (SELECT count(*)::int FROM payments WHERE account_id = $1) AS payments`,
      [accountId],
    );
    return rows[0]!;
  });
}

export async function keyRowIn(databaseUrl: string, accountId: string, key: string) {
  return withClient(databaseUrl, async (client) => {
    const { rows } = await client.query(
      `SELECT id, state::text, recovery_point::text, response_status FROM idempotency_keys WHERE account_id = $1 AND idem_key = $2`,
      [accountId, key],
    );
    return rows[0];
  });
}

/** Keys still in flight although their lease ran out: what the crash matrix must never leave behind. */
export async function stuckKeysIn(databaseUrl: string, accountId: string): Promise<number> {
  return withClient(databaseUrl, async (client) => {
    const { rows } = await client.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM idempotency_keys WHERE account_id = $1 AND state = 'in_flight' AND lease_expires_at <= now()`,
      [accountId],
    );
    return rows[0]!.n;
  });
}
