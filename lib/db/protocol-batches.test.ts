import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEmbeddedDatabase, type EmbeddedDatabase } from "@/lib/db/embedded";

/**
 * Many connections to the embedded database at once, the way the app's pool,
 * the payment simulator and the tests use it. Without the scheduler in
 * protocol-batches.ts these queries interleave on PGlite's one session and
 * fail (or return another query's rows).
 */
let embedded: EmbeddedDatabase;
let pool: pg.Pool;

beforeAll(async () => {
  embedded = await startEmbeddedDatabase(undefined, 10);
  pool = new pg.Pool({ connectionString: embedded.url, max: 10 });
});

afterAll(async () => {
  await pool?.end();
  await embedded?.close();
});

describe("the embedded database under concurrent connections", () => {
  it("answers 200 parameterised queries from 10 connections at once, each with its own rows", async () => {
    const numbers = Array.from({ length: 200 }, (_, i) => i);
    const answers = await Promise.all(
      numbers.map((n) =>
        pool.query<{ n: number; label: string }>("SELECT $1::int AS n, $2::text AS label", [
          n,
          `query-${n}`,
        ]),
      ),
    );
    expect(answers.map((answer) => answer.rows[0])).toEqual(
      numbers.map((n) => ({ n, label: `query-${n}` })),
    );
  });

  it("keeps serving after some of the concurrent queries fail", async () => {
    const numbers = Array.from({ length: 60 }, (_, i) => i);
    const outcomes = await Promise.allSettled(
      numbers.map((n) => pool.query<{ n: number }>("SELECT 10 / $1::int AS n", [n % 3])),
    );
    outcomes.forEach((outcome, i) => {
      if (i % 3 === 0)
        expect(outcome).toMatchObject({ status: "rejected", reason: { code: "22012" } }); // division by zero
      else
        expect(outcome).toMatchObject({
          status: "fulfilled",
          value: { rows: [{ n: Math.trunc(10 / (i % 3)) }] },
        });
    });
    expect((await pool.query<{ ok: boolean }>("SELECT true AS ok")).rows).toEqual([{ ok: true }]);
  });

  it("keeps a transaction's statements together while other connections query", async () => {
    const client = await pool.connect();
    try {
      await client.query("BEGIN");
      await client.query("CREATE TEMP TABLE probe (n int) ON COMMIT DROP");
      const others = Promise.all(
        Array.from({ length: 20 }, (_, n) => pool.query("SELECT $1::int AS n", [n])),
      );
      for (let n = 0; n < 20; n++) await client.query("INSERT INTO probe VALUES ($1)", [n]);
      expect(
        (await client.query<{ total: number }>("SELECT sum(n)::int AS total FROM probe")).rows,
      ).toEqual([{ total: 190 }]);
      await client.query("COMMIT");
      expect((await others).map((answer) => answer.rows[0])).toEqual(
        Array.from({ length: 20 }, (_, n) => ({ n })),
      );
    } finally {
      client.release();
    }
  });
});
