import type pg from "pg";

/**
 * A commit that waits for the synchronous standby can have that wait
 * cancelled (a statement timeout, pg_cancel_backend, a client's cancel
 * request). PostgreSQL then reports the commit as a success, with only a
 * WARNING that it "has already committed locally, but might not have been
 * replicated to the standby": it exists on this primary alone, and a
 * failover loses it. Taken for durable, a claim that puts its key at a side
 * effect's point (a checkout's `payment_started`) lost that way would let
 * the provider charge a key whose row the new primary never saw, and the
 * retry would charge again under a new row.
 *
 * So the hot path's statements run on a connection whose notices are read,
 * and such a commit is an error, which the engine treats like a database
 * that could not be reached: nothing charged, the client told to retry.
 */
export class UnreplicatedCommitError extends Error {
  /** Ours, not PostgreSQL's: database-errors.ts counts it as the database being unavailable. */
  readonly code = "ONCEPAY_UNREPLICATED_COMMIT";

  constructor() {
    super(
      "The commit's wait for the synchronous standby was cancelled: it may exist on the primary alone",
    );
  }
}

// PostgreSQL's words, for a cancel ("canceling wait for synchronous
// replication due to user request") and for a shutdown ("canceling the wait
// for synchronous replication and terminating connection ..."); the
// SQLSTATE is the generic warning 01000.
const CANCELLED_WAIT = /canceling (the )?wait for synchronous replication/i;

export function isCancelledReplicationWait(notice: { message?: string }): boolean {
  return CANCELLED_WAIT.test(notice.message ?? "");
}

/** pool.query, refusing a commit whose wait for the standby was cancelled. */
export async function queryReplicated<Row extends pg.QueryResultRow>(
  pool: pg.Pool,
  query: pg.QueryConfig,
): Promise<pg.QueryResult<Row>> {
  return withClient(pool, (client) => watchedQuery<Row>(client, query));
}

/** Runs a statement on the client, refusing a commit whose wait for the standby was cancelled. */
export async function watchedQuery<Row extends pg.QueryResultRow>(
  client: pg.PoolClient,
  query: pg.QueryConfig,
): Promise<pg.QueryResult<Row>> {
  let unreplicated = false;
  // The notice arrives before the statement's result, so it is seen by the time the query settles.
  const onNotice = (notice: { message?: string }) => {
    if (isCancelledReplicationWait(notice)) unreplicated = true;
  };
  client.on("notice", onNotice);
  try {
    const result = await client.query<Row>(query);
    if (unreplicated) throw new UnreplicatedCommitError();
    return result;
  } finally {
    client.off("notice", onNotice);
  }
}

/** Lends a client for `work`; as pool.query does, one that failed a statement is not reused. */
export async function withClient<T>(
  pool: pg.Pool,
  work: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  try {
    const result = await work(client);
    client.release();
    return result;
  } catch (error) {
    client.release(error instanceof Error ? error : true);
    throw error;
  }
}
