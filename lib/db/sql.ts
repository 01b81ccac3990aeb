import type pg from "pg";
import { Prisma } from "@/lib/generated/prisma/client";

/**
 * Statements composed from more than one module's parts: the order's rows
 * and the key that completes with them go out as one statement, so one
 * round trip and one commit. Built with Prisma's `sql` tag, which makes each
 * value a `$n` parameter and inlines nested fragments; no ORM runs.
 */
export type Sql = Prisma.Sql;
export const sql = Prisma.sql;
export const rawSql = Prisma.raw;

/** The pool, or one connection of it in a transaction: either runs a statement. */
export type Queryable = pg.Pool | pg.PoolClient;

/**
 * Rows written as data-modifying CTEs (`name AS (INSERT …)`, comma
 * separated) of a statement another module runs. Each selects FROM `gate`,
 * a FROM item with one row or none, so the rows are written exactly when
 * the gate has its row: when a key completes in the same statement, or
 * always (`writeRows`).
 */
export type GatedRows = (gate: Sql) => Sql;

/** A gate that always has its row. */
const ALWAYS = sql`(SELECT) AS always`;

/** Writes the rows by themselves: one statement, atomic on its own. */
export async function writeRows(db: Queryable, rows: GatedRows): Promise<void> {
  const statement = sql`WITH ${rows(ALWAYS)} SELECT`;
  await db.query(statement.text, statement.values);
}
