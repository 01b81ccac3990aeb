import { createHash } from "node:crypto";
import type pg from "pg";
import { queryReplicated } from "@oncepay/idempotency/pg";
import type { Queryable } from "@/lib/db/sql";

/**
 * How the hot path's statements go to the server.
 *
 * "prepared": each distinct statement is parsed and planned once per
 * connection, then only bound and run. On this project's machine that more
 * than halves a short statement's time (a replay's lookup: 0.37 ms
 * unnamed, 0.16 ms prepared, one at a time). The name is a hash of the
 * text, so one name always means one text, and the texts are a handful of
 * shapes (every value is a parameter); past MAX_PREPARED_TEXTS, a new text
 * goes unnamed, so a caller that built texts from values could not make
 * each connection keep them all.
 *
 * "unnamed": parsed and planned on every run. A pooler in transaction mode
 * needs this (PgBouncer 1.18 hands the server session to another client
 * after each transaction, and a prepared statement lives in one session),
 * and so does the embedded database (all its connections share one
 * session, where two connections' names would collide).
 *
 * Either way a commit whose wait for the synchronous standby was cancelled
 * is an error, not a success (replicated-commit.ts in packages/idempotency).
 */
export type StatementMode = "prepared" | "unnamed";

const MAX_PREPARED_TEXTS = 200;

export function statementsOn(pool: pg.Pool, mode: StatementMode): Queryable {
  const nameOf = statementNamer();
  return {
    query<Row extends pg.QueryResultRow>(text: string, values?: unknown[]) {
      const name = mode === "prepared" ? nameOf(text) : undefined;
      return queryReplicated<Row>(
        pool,
        name === undefined ? { text, values } : { name, text, values },
      );
    },
  };
}

/** How the app's statements go to the server, unless DATABASE_STATEMENTS says: unnamed behind a pooler, else prepared. */
export function statementModeOf(env: {
  DATABASE_STATEMENTS?: StatementMode;
  DIRECT_DATABASE_URL?: string;
}): StatementMode {
  return env.DATABASE_STATEMENTS ?? (env.DIRECT_DATABASE_URL ? "unnamed" : "prepared");
}

/** Names a statement by a hash of its text, for the first MAX_PREPARED_TEXTS texts; undefined after. */
export function statementNamer(): (text: string) => string | undefined {
  const names = new Map<string, string>();
  return (text) => {
    let name = names.get(text);
    if (name === undefined && names.size < MAX_PREPARED_TEXTS) {
      name = `oncepay_${createHash("sha256").update(text).digest("base64url").slice(0, 32)}`;
      names.set(text, name);
    }
    return name;
  };
}
