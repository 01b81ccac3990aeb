import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { SEARCH_PAYMENT_INTENTS_SQL } from "@/lib/payments/simulator/search";
import { newAdminKey } from "@/lib/payments/simulator/admin-key";
import { startPaymentSimulator } from "@/lib/payments/simulator/server";
import { newSecretKey, stripeFor } from "@/lib/testing/payment-simulator";
import { closeTestDb, withFreshDatabase } from "@/lib/testing/database";
import { itOnServer } from "@/lib/testing/postgres-server-only";

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

/** A simulator on `url`, as each start-up below makes one. */
const startOn = (url: string) =>
  startPaymentSimulator({ databaseUrl: url, poolMax: 2, adminKey: newAdminKey() });

describe("the simulator's schema", () => {
  it("is created in its own schema on an empty database, and kept (with its ledger) on the next start", async () => {
    await withFreshDatabase(async (url) => {
      const first = await startOn(url);
      const secretKey = await newSecretKey(first);
      const intent = await stripeFor(first, secretKey).paymentIntents.create({
        amount: 1900,
        currency: "usd",
        payment_method: "pm_card_visa",
        confirm: true,
      });
      await first.close();

      const second = await startOn(url);
      try {
        expect(await simulatorTables(url)).toEqual([
          "api_keys",
          "charges",
          "events",
          "idempotency_keys",
          "payment_intents",
          "refunds",
          "webhook_deliveries",
          "webhook_endpoints",
        ]);
        // The ledger and the account (its key) survived the restart.
        expect(await stripeFor(second, secretKey).paymentIntents.retrieve(intent.id)).toMatchObject(
          { id: intent.id, status: "succeeded" },
        );
      } finally {
        await second.close();
      }
    });
  });

  it("gives a database made before refunds what they need on the next start: the refunds table, and charges' running total", async () => {
    await withFreshDatabase(async (url) => {
      const first = await startOn(url);
      const secretKey = await newSecretKey(first);
      const intent = await stripeFor(first, secretKey).paymentIntents.create({
        amount: 1900,
        currency: "usd",
        payment_method: "pm_card_visa",
        confirm: true,
      });
      await first.close();
      // What such a database looks like: its charges made before the column.
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        await client.query(`DROP TABLE payment_simulator.refunds`);
        await client.query(`ALTER TABLE payment_simulator.charges DROP COLUMN amount_refunded`);
      } finally {
        await client.end();
      }

      const second = await startOn(url);
      try {
        const stripe = stripeFor(second, secretKey);
        expect(await stripe.charges.retrieve(intent.latest_charge as string)).toMatchObject({
          amount_refunded: 0,
          refunded: false,
        });
        const refund = await stripe.refunds.create({ payment_intent: intent.id });
        expect(refund).toMatchObject({ amount: 1900, status: "succeeded" });
      } finally {
        await second.close();
      }
    });
  });

  it("widens a database made before 3-D Secure on the next start, so an intent can wait in requires_action", async () => {
    await withFreshDatabase(async (url) => {
      const first = await startOn(url);
      const secretKey = await newSecretKey(first);
      await first.close();
      // Such a database: the status CHECK without requires_action, no 3-D Secure columns.
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        await client.query(`ALTER TABLE payment_simulator.payment_intents
          DROP CONSTRAINT payment_intents_status_check, DROP COLUMN return_url, DROP COLUMN next_action,
          ADD CONSTRAINT payment_intents_status_check
            CHECK (status IN ('requires_payment_method', 'requires_confirmation', 'succeeded'))`);
      } finally {
        await client.end();
      }

      const second = await startOn(url);
      try {
        const intent = await stripeFor(second, secretKey).paymentIntents.create({
          amount: 1900,
          currency: "usd",
          payment_method: "pm_card_authenticationRequired",
          confirm: true,
          return_url: "https://shop.example/return",
        });
        expect(intent).toMatchObject({
          status: "requires_action",
          next_action: { type: "redirect_to_url" },
        });
      } finally {
        await second.close();
      }
    });
  });

  // PGlite has one session, so its advisory locks exclude nobody and its
  // statements never interleave: the race this lock closes exists, and is
  // tested, only on a real PostgreSQL.
  itOnServer(
    "sessions",
    "lets several simulators start together on an empty database",
    async () => {
      await withFreshDatabase(async (url) => {
        const simulators = await Promise.all(
          Array.from({ length: 4 }, () =>
            startPaymentSimulator({ databaseUrl: url, poolMax: 1, adminKey: newAdminKey() }),
          ),
        );
        try {
          expect(await simulatorTables(url)).toEqual([
            "api_keys",
            "charges",
            "events",
            "idempotency_keys",
            "payment_intents",
            "refunds",
            "webhook_deliveries",
            "webhook_endpoints",
          ]);
        } finally {
          await Promise.all(simulators.map((simulator) => simulator.close()));
        }
      });
    },
  );

  // OncePay's shop charges every order under one API key, so the account
  // narrows nothing: finding one charge by its provider key among many must
  // go through the metadata index, not read every intent the shop has made.
  it("lets the search find one intent by metadata through its GIN index, among 20,000 of one account", async () => {
    await withFreshDatabase(async (url) => {
      await (
        await startPaymentSimulator({ databaseUrl: url, poolMax: 1, adminKey: newAdminKey() })
      ).close();
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        await client.query(
          `INSERT INTO payment_simulator.payment_intents (id, account, amount, currency, status, payment_method_types, client_secret, metadata)
           SELECT 'pi_' || i, 'one_shop', 1900, 'usd', 'succeeded', '{card}', 'pi_' || i || '_secret', jsonb_build_object('oncepay_provider_key', 'oncepay:k' || i)
             FROM generate_series(1, 20000) AS i`,
        );
        await client.query(`ANALYZE payment_simulator.payment_intents`);
        for (const after of [
          [null, null],
          [2_000_000_000, "pi_zzz"],
        ]) {
          const { rows } = await client.query<{ "QUERY PLAN": string }>(
            `EXPLAIN ${SEARCH_PAYMENT_INTENTS_SQL}`,
            [
              "one_shop",
              JSON.stringify({ oncepay_provider_key: "oncepay:k123" }),
              null,
              null,
              101,
              ...after,
            ],
          );
          const plan = rows.map((row) => row["QUERY PLAN"]).join("\n");
          expect(plan).toMatch(/Bitmap Index Scan on payment_intents_by_metadata/);
          expect(plan).toMatch(/account = /);
        }
      } finally {
        await client.end();
      }
    });
  });
});
