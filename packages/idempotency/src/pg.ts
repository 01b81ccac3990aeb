import { createHash } from "node:crypto";
import pg from "pg";
import { isDatabaseUnavailable } from "./database-errors.js";
import { KEY_CHANGED_CHANNEL, type KeyWaiters } from "./key-events.js";
import { watchedQuery, withClient } from "./replicated-commit.js";
import { SqlKeyStore, type SqlConnection } from "./sql-key-store.js";
import { silentReporter, type Reporter } from "./reporter.js";
import type { KeyStore, KeyTimings } from "./store.js";

/**
 * An atomic phase's `tx` on the `pg` store: write with `tx.query`, never
 * the pool. It is one connection of the pool, and its transaction begins
 * with its first statement: a phase that writes nothing of its own leaves
 * the key's move to run as one statement, one round trip instead of three.
 * Its statements are prepared as the store's are (`statements`): build
 * them with parameters, so that their texts are a handful.
 */
export interface PgTransaction {
  query<Row extends pg.QueryResultRow = pg.QueryResultRow>(
    text: string,
    values?: readonly unknown[],
  ): Promise<pg.QueryResult<Row>>;
}

export interface PgStoreOptions extends KeyTimings {
  /**
   * "prepared" (the default): each statement is parsed and planned once per
   * connection, then only bound and run; a short statement takes well under
   * half the time. "unnamed": parsed every time, as a pooler in transaction
   * mode (PgBouncer) needs, since a prepared statement lives in one server
   * session.
   */
  statements?: "prepared" | "unnamed";
}

export function pgStore(pool: pg.Pool, options: PgStoreOptions): KeyStore<PgTransaction> {
  const { statements = "prepared", ...timings } = options;
  return new SqlKeyStore(pgConnection(pool, statements), timings);
}

/**
 * Runs the store's statements on the pool. Every one is watched for a
 * commit whose wait for a synchronous standby was cancelled: PostgreSQL
 * reports it as a success with a warning, though only this primary has it,
 * and it is an error here (replicated-commit.ts).
 */
export function pgConnection(
  pool: pg.Pool,
  statements: "prepared" | "unnamed",
): SqlConnection<PgTransaction> {
  const nameOf = statementNamer();
  const config = (text: string, values: readonly unknown[]): pg.QueryConfig => {
    const name = statements === "prepared" ? nameOf(text) : undefined;
    return { text, values: [...values], ...(name && { name }) };
  };
  return {
    async query<Row>(text: string, values: readonly unknown[]) {
      return withClient(
        pool,
        async (client) => (await watchedQuery(client, config(text, values))).rows as Row[],
      );
    },
    async transaction(work) {
      const client = await pool.connect();
      let begun = false;
      // Set when even the ROLLBACK fails: the connection is broken, and is closed rather than reused.
      let broken: Error | undefined;
      const tx: PgTransaction = {
        async query<Row extends pg.QueryResultRow>(text: string, values: readonly unknown[] = []) {
          if (!begun) {
            await client.query("BEGIN");
            begun = true;
          }
          // Prepared like the store's own: the operation's statements are as few shapes, run as often.
          return client.query<Row>(config(text, values));
        },
      };
      try {
        const result = await work(tx, async <Row>(text: string, values: readonly unknown[]) => {
          // Nothing before it: the key's statement is the whole transaction, and commits alone.
          if (!begun) return (await watchedQuery(client, config(text, values))).rows as Row[];
          return (await client.query(config(text, values))).rows as Row[];
        });
        if (begun) await watchedQuery(client, { text: "COMMIT" });
        return result;
      } catch (error) {
        if (begun)
          broken = await client.query("ROLLBACK").then(
            () => undefined,
            (rollbackError: unknown) =>
              rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError)),
          );
        throw error;
      } finally {
        client.release(broken);
      }
    },
    isUnavailable: isDatabaseUnavailable,
  };
}

// Statement names are a hash of the text, so one name always means one
// text. The store's texts are a handful; the bound only keeps a caller that
// built texts from values from making every connection keep them all.
const MAX_PREPARED_TEXTS = 200;

function statementNamer(): (text: string) => string | undefined {
  const names = new Map<string, string>();
  return (text) => {
    let name = names.get(text);
    if (name === undefined && names.size < MAX_PREPARED_TEXTS) {
      name = `idempotency_${createHash("sha256").update(text).digest("base64url").slice(0, 32)}`;
      names.set(text, name);
    }
    return name;
  };
}

export {
  isCancelledReplicationWait,
  queryReplicated,
  UnreplicatedCommitError,
} from "./replicated-commit.js";

export interface KeyListenerOptions {
  /**
   * A connection straight to PostgreSQL (the primary, or whatever always
   * leads to it), never through a pooler in transaction mode: LISTEN lives
   * in one server session.
   */
  connection: pg.ClientConfig;
  waiters: KeyWaiters;
  reporter?: Reporter;
  /** The longest pause between attempts to listen again after the connection was lost. */
  maxRetryMs?: number;
}

/**
 * One connection per instance that LISTENs to the keys' changes and wakes
 * this instance's waiters, whichever instance committed the change. While
 * it is down (not yet connected, or lost, as in a failover) the waiters are
 * told so: those waiting are answered at once, and no new request waits;
 * it connects again, with a growing pause, to wherever `connection` leads.
 */
export function listenForKeyChanges(options: KeyListenerOptions): { close(): Promise<void> } {
  const { waiters, reporter = silentReporter, maxRetryMs = 5_000 } = options;
  let client: pg.Client | undefined;
  let closed = false;
  let pause = 100;
  let retry: NodeJS.Timeout | undefined;
  waiters.lose();

  // Once per connection: its error and its end both call this.
  const lost = (from: pg.Client, error: unknown) => {
    if (closed || client !== from) return;
    waiters.lose();
    reporter.warn("idempotency.key_listener_lost", { error });
    client?.removeAllListeners();
    void client?.end().catch(() => undefined);
    client = undefined;
    retry = setTimeout(connect, pause);
    retry.unref(); // A pause never keeps the process alive.
    pause = Math.min(pause * 2, maxRetryMs);
  };

  async function connect() {
    const next = new pg.Client(options.connection);
    client = next;
    next.on("error", (error) => lost(next, error));
    next.on("end", () => lost(next, new Error("the listening connection ended")));
    next.on("notification", (message) => {
      if (message.channel === KEY_CHANGED_CHANNEL && message.payload)
        waiters.publish(message.payload);
    });
    try {
      await next.connect();
      await next.query(`LISTEN ${KEY_CHANGED_CHANNEL}`);
    } catch (error) {
      lost(next, error);
      return;
    }
    if (closed) return;
    pause = 100;
    waiters.regain();
    reporter.info("idempotency.key_listener_ready", {});
  }

  void connect();
  return {
    async close() {
      closed = true;
      clearTimeout(retry);
      waiters.lose();
      const last = client;
      client = undefined;
      last?.removeAllListeners();
      await last?.end().catch(() => undefined);
    },
  };
}
