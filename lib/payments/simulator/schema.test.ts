import pg from "pg";
import { afterAll, describe, expect, inject, it } from "vitest";
import { startPaymentSimulator } from "@/lib/payments/simulator/server";
import { newSecretKey, stripeFor } from "@/lib/testing/payment-simulator";
import { closeTestDb, withFreshDatabase } from "@/lib/testing/database";

/**
 * The simulator creates its own tables at start-up, in schema
 * payment_simulator, and several simulators may start at once.
 */
afterAll(closeTestDb);

async function simulatorTables(url: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ table_name: string }>(
      `SELECT table_name FROM information_schema.tables WHERE table_schema = 'payment_simulator' ORDER BY table_name`,
    );
    return rows.map((row) => row.table_name);
  } finally {
    await client.end();
  }
}

describe("the simulator's schema", () => {
  it("is created in its own schema on an empty database, and kept (with its ledger) on the next start", async () => {
    await withFreshDatabase(async (url) => {
      const first = await startPaymentSimulator({ databaseUrl: url, poolMax: 2 });
      const secretKey = await newSecretKey(first);
      const intent = await stripeFor(first, secretKey).paymentIntents.create({ amount: 1900, currency: "usd", payment_method: "pm_card_visa", confirm: true });
      await first.close();

      const second = await startPaymentSimulator({ databaseUrl: url, poolMax: 2 });
      try {
        expect(await simulatorTables(url)).toEqual(["api_keys", "charges", "idempotency_keys", "payment_intents"]);
        // The ledger and the account (its key) survived the restart.
        expect(await stripeFor(second, secretKey).paymentIntents.retrieve(intent.id)).toMatchObject({ id: intent.id, status: "succeeded" });
      } finally {
        await second.close();
      }
    });
  });

  // PGlite has one session, so its advisory locks exclude nobody and its
  // statements never interleave: the race this lock closes exists, and is
  // tested, only on a real PostgreSQL.
  it.runIf(inject("realPostgres"))("lets several simulators start together on an empty database", async () => {
    await withFreshDatabase(async (url) => {
      const simulators = await Promise.all(Array.from({ length: 4 }, () => startPaymentSimulator({ databaseUrl: url, poolMax: 1 })));
      try {
        expect(await simulatorTables(url)).toEqual(["api_keys", "charges", "idempotency_keys", "payment_intents"]);
      } finally {
        await Promise.all(simulators.map((simulator) => simulator.close()));
      }
    });
  });
});
