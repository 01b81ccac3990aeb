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

/** What runs a statement: the pool, one connection of it in a transaction, or the pool with its statements prepared (lib/db/statements.ts). */
export interface Queryable {
  query<Row extends pg.QueryResultRow = pg.QueryResultRow>(
    text: string,
    values?: unknown[],
  ): Promise<pg.QueryResult<Row>>;
}

/**
 * Rows written as data-modifying CTEs (`name AS (INSERT …)`, comma
 * separated) of a statement another module runs. Each selects FROM `gate`,
 * a FROM item with one row or none, so the rows are written exactly when
 * the gate has its row: when a key completes in the same statement, or
 * always (`writeRows`).
 */
export type GatedRows = (gate: Sql) => Sql;

/**
 * A question that rides on another module's statement, as GatedRows ride on
 * the completion: `ctes` (optional) select FROM the gate, and `answer` is
 * one expression over them, which the statement returns and `read` turns
 * into a value (null when the gate had no row). The checkout's admission,
 * for one: the rate limit's count and the demo settings, asked in the
 * statement that claims the key.
 */
export interface GatedQuery<T> {
  ctes?: GatedRows;
  answer: Sql;
  read(answer: unknown): T;
}

/** A gate that always has its row. */
const ALWAYS = sql`(SELECT) AS always`;

/** The CTEs of a statement: `WITH a AS (…), b AS (…) ` with the parts given, or nothing. */
export function withClause(parts: (Sql | undefined)[]): Sql {
  const present = parts.filter((part): part is Sql => part !== undefined);
  return present.length === 0 ? sql`` : sql`WITH ${Prisma.join(present, ", ")} `;
}

/** Asks the question by itself: one statement. */
export async function askGated<T>(db: Queryable, query: GatedQuery<T>): Promise<T> {
  const statement = sql`${withClause([query.ctes?.(ALWAYS)])}SELECT ${query.answer} AS answer`;
  const result = await db.query<{ answer: unknown }>(statement.text, statement.values);
  return query.read(result.rows[0]!.answer);
}

/** Several questions asked as one: their CTEs side by side, their answers as the fields of one JSON object. */
export function gatedTogether<Questions extends Record<string, GatedQuery<unknown>>>(
  questions: Questions,
): GatedQuery<{ [Name in keyof Questions]: ReturnType<Questions[Name]["read"]> }> {
  const names = Object.keys(questions);
  const ctes = names
    .map((name) => questions[name]!.ctes)
    .filter((part): part is GatedRows => part !== undefined);
  return {
    ctes:
      ctes.length === 0
        ? undefined
        : (gate) =>
            Prisma.join(
              ctes.map((part) => part(gate)),
              ", ",
            ),
    answer: sql`jsonb_build_object(${Prisma.join(
      names.map((name) => sql`${name}::text, ${questions[name]!.answer}`),
      ", ",
    )})`,
    read(answer) {
      const fields = (answer ?? {}) as Record<string, unknown>;
      return Object.fromEntries(
        names.map((name) => [name, questions[name]!.read(fields[name] ?? null)]),
      ) as never;
    },
  };
}

/** Writes the rows by themselves: one statement, atomic on its own. */
export async function writeRows(db: Queryable, rows: GatedRows): Promise<void> {
  const statement = sql`${withClause([rows(ALWAYS)])}SELECT`;
  await db.query(statement.text, statement.values);
}
