import { setTimeout as delay } from "node:timers/promises";
import pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { isDatabaseUnavailable } from "@oncepay/idempotency";
import { queryReplicated, UnreplicatedCommitError } from "@oncepay/idempotency/pg";
import { describeOnServer } from "@/lib/testing/postgres-server-only";
import { startThrowawayPostgres, type ThrowawayPostgres } from "@/lib/testing/throwaway-postgres";

/**
 * A server that names a synchronous standby that never connects: every
 * durable commit waits for it, as a primary's does while its standby is
 * stopped, until the test cancels the wait.
 */
let server: ThrowawayPostgres;
let pool: pg.Pool;
let admin: pg.Client;

describeOnServer("crash", "a commit whose wait for the synchronous standby is cancelled", () => {
  beforeAll(async () => {
    server = await startThrowawayPostgres({ synchronous_standby_names: "nobody" });
    admin = new pg.Client({ connectionString: server.url });
    await admin.connect();
    // The test's own writes do not wait for the standby.
    await admin.query("SET synchronous_commit = local");
    await admin.query("CREATE TABLE charges_started (key text PRIMARY KEY)");
    pool = new pg.Pool({ connectionString: server.url, max: 2 });
    // pool.end() resolves before its connections have closed; stopping the
    // server ends the stragglers with an error, which must not be unhandled.
    pool.on("error", () => undefined);
  }, 60_000);

  afterAll(async () => {
    await pool?.end();
    await admin?.end();
    await server?.remove();
  });

  it("is reported by PostgreSQL as a success: the trap", async () => {
    const insert = settled(pool.query("INSERT INTO charges_started VALUES ('plain')"));
    await cancelWaitingCommits();
    expect(await insert).toMatchObject({ status: "fulfilled", value: { rowCount: 1 } });
    // It committed here, and nowhere else.
    expect(await keys()).toContain("plain");
  });

  it("is an UnreplicatedCommitError through queryReplicated, which counts as the database being unavailable", async () => {
    const insert = settled(
      queryReplicated(pool, {
        text: "INSERT INTO charges_started VALUES ($1)",
        values: ["checked"],
      }),
    );
    await cancelWaitingCommits();
    const outcome = await insert;
    expect(outcome.status).toBe("rejected");
    const error = outcome.status === "rejected" ? outcome.reason : undefined;
    expect(error).toBeInstanceOf(UnreplicatedCommitError);
    expect(isDatabaseUnavailable(error)).toBe(true);
  });

  it("passes a commit that did not wait, and leaves the connection usable", async () => {
    const read = await queryReplicated<{ n: number }>(pool, {
      text: "SELECT count(*)::int AS n FROM charges_started",
    });
    expect(read.rows[0]!.n).toBe(2);
  });
});

/** Cancels the first commit found waiting for the standby (it may take a moment to get there). */
async function cancelWaitingCommits(): Promise<void> {
  for (let tries = 0; tries < 100; tries++) {
    const { rows } = await admin.query<{ cancelled: boolean }>(
      `SELECT pg_cancel_backend(pid) AS cancelled FROM pg_stat_activity WHERE wait_event = 'SyncRep'`,
    );
    if (rows.some((row) => row.cancelled)) return;
    await delay(50);
  }
  throw new Error("No commit waited for the synchronous standby");
}

/**
 * The promise's outcome, handled from the moment it is made: its answer can
 * arrive while cancelWaitingCommits still awaits its own, and a rejection with
 * no handler yet fails the whole run.
 */
function settled<T>(promise: Promise<T>): Promise<PromiseSettledResult<T>> {
  return Promise.allSettled([promise]).then(([outcome]) => outcome!);
}

async function keys(): Promise<string[]> {
  const { rows } = await admin.query<{ key: string }>("SELECT key FROM charges_started");
  return rows.map((row) => row.key);
}
