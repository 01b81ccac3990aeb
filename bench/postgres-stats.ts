import { setTimeout as delay } from "node:timers/promises";
import pg from "pg";

/**
 * What PostgreSQL itself counted, read between scenarios: transactions and
 * rows written in the database (pg_stat_database, so the payment
 * simulator's, which shares it, are in), WAL bytes written
 * (pg_current_wal_lsn) and WAL flushes (pg_stat_wal.wal_sync: the durable
 * commits that waited for the disk; concurrent commits share one flush, so
 * read them from sequential runs).
 *
 * PostgreSQL 15 keeps each backend's counts to itself until the backend
 * has been idle for 10 s (or 1 s after its last report, when busy): a read
 * right after a run misses the pool's last transactions. So every reading
 * first waits out that delay, with nothing running.
 */
export interface StatsReading {
  transactions: number;
  rowsWritten: number;
  walBytes: bigint;
  walFlushes: number;
  at: number;
}

export interface StatsDelta {
  transactions: number;
  rowsWritten: number;
  walBytes: number;
  walFlushes: number;
  seconds: number;
}

// PGSTAT_IDLE_INTERVAL (10 s) and a margin.
const STATS_SETTLE_MS = 11_000;

export async function openStats(
  databaseUrl: string,
): Promise<{ read(): Promise<StatsReading>; close(): Promise<void> }> {
  const client = new pg.Client({
    connectionString: databaseUrl,
    application_name: "oncepay-bench-stats",
  });
  await client.connect();
  return {
    async read() {
      await delay(STATS_SETTLE_MS);
      const { rows } = await client.query<{
        transactions: string;
        rows_written: string;
        wal_lsn: string;
        wal_sync: string;
      }>(
        `SELECT d.xact_commit + d.xact_rollback AS transactions,
                d.tup_inserted + d.tup_updated + d.tup_deleted AS rows_written,
                pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::text AS wal_lsn,
                w.wal_sync
           FROM pg_stat_database d, pg_stat_wal w
          WHERE d.datname = current_database()`,
      );
      const row = rows[0]!;
      return {
        transactions: Number(row.transactions),
        rowsWritten: Number(row.rows_written),
        walBytes: BigInt(row.wal_lsn.split(".")[0]!),
        walFlushes: Number(row.wal_sync),
        at: performance.now(),
      };
    },
    close: () => client.end(),
  };
}

export function deltaOf(before: StatsReading, after: StatsReading): StatsDelta {
  return {
    // The reading's own query is a transaction too.
    transactions: after.transactions - before.transactions - 1,
    rowsWritten: after.rowsWritten - before.rowsWritten,
    walBytes: Number(after.walBytes - before.walBytes),
    walFlushes: after.walFlushes - before.walFlushes,
    seconds: (after.at - before.at) / 1000,
  };
}
