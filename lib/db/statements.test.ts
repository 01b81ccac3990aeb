import { randomUUID } from "node:crypto";
import pg from "pg";
import { afterAll, describe, expect, inject, it } from "vitest";
import { statementsOn } from "@/lib/db/statements";

/**
 * The hot path's statements, prepared or not, on the database under test:
 * what the server keeps for the one connection of a pool of one. Each test
 * marks its texts with a tag of its own and counts only those, because the
 * embedded database serves every connection from one session, where the
 * statements other tests prepared are visible too.
 */
const pools: pg.Pool[] = [];
afterAll(async () => Promise.all(pools.map((pool) => pool.end())));

function poolOfOne(): pg.Pool {
  const pool = new pg.Pool({ connectionString: inject("databaseUrl"), max: 1 });
  pools.push(pool);
  return pool;
}

const newTag = () => `/* ${randomUUID()} */`;

const preparedOn = async (pool: pg.Pool, tag: string) =>
  (
    await pool.query<{ name: string; statement: string }>(
      `SELECT name, statement FROM pg_prepared_statements WHERE name LIKE 'oncepay_%' AND strpos(statement, $1) > 0`,
      [tag],
    )
  ).rows;

describe("statements on a direct connection (prepared)", () => {
  it("prepares each text once, under one name, and runs it again with other values", async () => {
    const pool = poolOfOne();
    const statements = statementsOn(pool, "prepared");
    const tag = newTag();
    const text = `SELECT $1::int + 1 AS next ${tag}`;

    const answers = [
      await statements.query<{ next: number }>(text, [1]),
      await statements.query<{ next: number }>(text, [41]),
    ];

    expect(answers.map((answer) => answer.rows[0]!.next)).toEqual([2, 42]);
    expect(await preparedOn(pool, tag)).toEqual([
      { name: expect.stringMatching(/^oncepay_/), statement: text },
    ]);
  });

  it("gives two texts two names", async () => {
    const pool = poolOfOne();
    const statements = statementsOn(pool, "prepared");
    const tag = newTag();
    await statements.query(`SELECT 1 AS one ${tag}`);
    await statements.query(`SELECT 2 AS two ${tag}`);
    expect(new Set((await preparedOn(pool, tag)).map((row) => row.name)).size).toBe(2);
  });

  it("stops preparing new texts past its limit, so texts built from values cannot fill the connection", async () => {
    const pool = poolOfOne();
    const statements = statementsOn(pool, "prepared");
    const tag = newTag();
    for (let distinct = 0; distinct < 250; distinct += 1)
      await statements.query(`SELECT ${distinct} AS n ${tag}`);
    expect((await preparedOn(pool, tag)).length).toBe(200);
    expect((await statements.query<{ n: number }>(`SELECT 249 AS n ${tag}`)).rows[0]!.n).toBe(249);
  });
});

describe("statements through a pooler in transaction mode (unnamed)", () => {
  it("leaves nothing in the server's session", async () => {
    const pool = poolOfOne();
    const statements = statementsOn(pool, "unnamed");
    const tag = newTag();
    await statements.query(`SELECT $1::int AS n ${tag}`, [1]);
    expect(await preparedOn(pool, tag)).toEqual([]);
  });
});
