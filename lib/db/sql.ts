import type pg from "pg";
import { Prisma } from "@/lib/generated/prisma/client";

/**
 * Statements built from parts, with Prisma's `sql` tag, which makes each
 * value a `$n` parameter and inlines nested fragments; no ORM runs. The
 * checkout writes an order's rows in one statement (order, items, payment),
 * so one round trip inside the transaction that completes its key.
 */
export type Sql = Prisma.Sql;
export const sql = Prisma.sql;
export const rawSql = Prisma.raw;

/** What runs a statement: the pool, one connection of it in a transaction, or the pool with its statements prepared (lib/db/statements.ts). */
export interface Queryable {
  query<Row extends pg.QueryResultRow = pg.QueryResultRow>(
    text: string,
    values?: unknown[],
  ): Promise<pg.QueryResult<Row>>;
}

/** Runs a built statement. */
export async function run<Row extends pg.QueryResultRow = pg.QueryResultRow>(
  db: Queryable,
  statement: Sql,
): Promise<Row[]> {
  return (await db.query<Row>(statement.text, statement.values)).rows;
}
