import { cp, mkdtemp, readFile, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { MIGRATIONS_DIR, migrate } from "@/lib/db/migrate";
import { PrismaClient } from "@/lib/generated/prisma/client";
import {
  AccountKind,
  KeyRequestAnswer,
  LabRunKind,
  LabStrategy,
  OrderSource,
  OrderStatus,
  PaymentStatus,
} from "@/lib/generated/prisma/enums";
import { closeTestDb, withFreshDatabase } from "@/lib/testing/database";
import { readPrismaSchema } from "@/lib/testing/prisma-schema";

/**
 * schema.prisma and the hand-written SQL migrations must describe the same
 * database. Prisma's own diff needs its native engine, so we check it here:
 * after migrating an empty database, every model's table has exactly the
 * columns the generated client expects, and every field and enum value
 * round-trips through the client.
 */
afterAll(closeTestDb);

interface RuntimeField {
  name: string;
  kind: "scalar" | "enum" | "object";
  dbName?: string;
}
interface RuntimeModel {
  dbName: string | null;
  fields: RuntimeField[];
}

function expectedColumns(client: PrismaClient): Map<string, string[]> {
  // The generated client carries its data model (names and column mappings).
  const model = (
    client as unknown as { _runtimeDataModel: { models: Record<string, RuntimeModel> } }
  )._runtimeDataModel;
  return new Map(
    Object.entries(model.models).map(([name, definition]) => [
      definition.dbName ?? name,
      definition.fields
        .filter((field) => field.kind !== "object")
        .map((field) => field.dbName ?? field.name)
        .sort(),
    ]),
  );
}

async function withMigratedClient(run: (client: PrismaClient, url: string) => Promise<void>) {
  await withFreshDatabase(async (url) => {
    await migrate(url);
    const client = new PrismaClient({ adapter: new PrismaPg({ connectionString: url, max: 2 }) });
    try {
      await run(client, url);
    } finally {
      await client.$disconnect();
    }
  });
}

describe("schema.prisma and the SQL migrations", () => {
  it("agree on every table and column", async () => {
    await withMigratedClient(async (client, url) => {
      const sql = new pg.Client({ connectionString: url });
      await sql.connect();
      try {
        const { rows } = await sql.query<{ table_name: string; column_name: string }>(
          `SELECT table_name, column_name FROM information_schema.columns
            WHERE table_schema = 'public' AND table_name <> '_prisma_migrations'`,
        );
        const actual = new Map<string, string[]>();
        for (const row of rows)
          actual.set(row.table_name, [...(actual.get(row.table_name) ?? []), row.column_name]);
        for (const columns of actual.values()) columns.sort();
        expect(Object.fromEntries(actual)).toEqual(Object.fromEntries(expectedColumns(client)));
      } finally {
        await sql.end();
      }
    });
  });

  it("agree on which columns may be NULL and on every unique constraint", async () => {
    await withMigratedClient(async (_client, url) => {
      const sql = new pg.Client({ connectionString: url });
      await sql.connect();
      try {
        const { rows: columns } = await sql.query<{
          table_name: string;
          column_name: string;
          is_nullable: "YES" | "NO";
        }>(
          `SELECT table_name, column_name, is_nullable FROM information_schema.columns
            WHERE table_schema = 'public' AND table_name <> '_prisma_migrations'`,
        );
        // Every unique index, as its columns in index order (the primary key is one too).
        const { rows: uniques } = await sql.query<{ table_name: string; columns: string }>(
          `SELECT t.relname AS table_name, string_agg(a.attname, ',' ORDER BY k.ord) AS columns
             FROM pg_index i
             JOIN pg_class t ON t.oid = i.indrelid
             JOIN pg_namespace n ON n.oid = t.relnamespace AND n.nspname = 'public'
             CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord)
             JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum
            WHERE i.indisunique AND t.relname <> '_prisma_migrations'
            GROUP BY t.relname, i.indexrelid`,
        );
        const actual = new Map<string, { columns: Record<string, boolean>; uniques: string[] }>();
        const tableIn = (name: string) =>
          actual.get(name) ?? actual.set(name, { columns: {}, uniques: [] }).get(name)!;
        for (const row of columns)
          tableIn(row.table_name).columns[row.column_name] = row.is_nullable === "YES";
        for (const row of uniques) tableIn(row.table_name).uniques.push(row.columns);

        const expected = new Map(
          [...readPrismaSchema()].map(([table, shape]) => [
            table,
            { columns: Object.fromEntries(shape.columns), uniques: [...shape.uniques].sort() },
          ]),
        );
        for (const shape of actual.values()) shape.uniques.sort();
        expect(Object.fromEntries(actual)).toEqual(Object.fromEntries(expected));
      } finally {
        await sql.end();
      }
    });
  });

  it("round-trip every model, field and enum value through the client", async () => {
    await withMigratedClient(async (client) => {
      for (const kind of Object.values(AccountKind)) {
        await client.account.create({ data: { tokenHash: kind.padEnd(64, "0"), kind } });
      }
      const account = await client.account.findUniqueOrThrow({
        where: { tokenHash: "api".padEnd(64, "0") },
      });
      expect(account.createdAt).toBeInstanceOf(Date);
      const demo = await client.demoSettings.create({
        data: { accountId: account.id, networkDelayMs: 1500, loseResponse: true },
      });
      expect(
        await client.demoSettings.findUniqueOrThrow({ where: { accountId: account.id } }),
      ).toEqual(demo);

      const now = new Date();
      const keys = [];
      // Plain text in the database now (the engine's names, a CHECK on the state), no enums.
      for (const [index, state] of ["in_flight", "complete"].entries()) {
        for (const recoveryPoint of ["claimed", "payment_started", "charged", "finished"]) {
          keys.push(
            await client.idempotencyKey.create({
              data: {
                scope: account.id,
                idemKey: `${state}-${recoveryPoint}-${index}`,
                operation: "checkout",
                fingerprint: "f".repeat(64),
                request: { cartId: "c", items: [{ sku: "s", quantity: 1 }] },
                state,
                recoveryPoint,
                progress: {
                  cart: { total: 1234 },
                  charge: { status: "succeeded", providerPaymentId: "pi_1" },
                  providerKey: "oncepay:k",
                },
                pointReachedAt: now,
                pointsReached: { payment_started: now.toISOString(), charged: now.toISOString() },
                sideEffectGeneration: 1,
                leaseOwner: crypto.randomUUID(),
                leaseExpiresAt: now,
                responseStatus: 201,
                responseHeaders: { Location: "/x" },
                responseBody: { nested: { list: [1, "two", null, true] } },
                completedAt: now,
                expiresAt: now,
              },
            }),
          );
        }
      }
      const key = keys[0]!;
      expect(await client.idempotencyKey.findUniqueOrThrow({ where: { id: key.id } })).toEqual(key);

      const answers = Object.values(KeyRequestAnswer);
      const count = await client.idempotencyKeyRequestCount.create({
        data: { keyId: key.id, seen: answers.length },
      });
      expect(
        await client.idempotencyKeyRequestCount.findUniqueOrThrow({ where: { keyId: key.id } }),
      ).toEqual(count);
      for (const [index, answer] of answers.entries()) {
        const request = await client.idempotencyKeyRequest.create({
          data: {
            keyId: key.id,
            nth: index + 1,
            requestId: crypto.randomUUID(),
            receivedAt: now,
            answeredAt: now,
            status: 200 + index,
            answer,
          },
        });
        expect(
          await client.idempotencyKeyRequest.findUniqueOrThrow({
            where: { keyId_nth: { keyId: key.id, nth: request.nth } },
          }),
        ).toEqual(request);
      }

      for (const [index, source] of Object.values(OrderSource).entries()) {
        const order = await client.order.create({
          data: {
            accountId: account.id,
            source,
            idemKey: `key-${index}`,
            cartId: `cart-${index}`,
            status: "paid",
            currency: "usd",
            totalAmount: 1,
          },
        });
        expect(await client.order.findUniqueOrThrow({ where: { id: order.id } })).toEqual(order);
      }

      for (const strategy of Object.values(LabStrategy)) {
        for (const kind of Object.values(LabRunKind)) {
          const storm = await client.labStorm.create({
            data: {
              accountId: account.id,
              strategy,
              kind,
              size: 10,
              idemKey: strategy === "no_key" ? null : `storm-${strategy}`,
              cartId: `cart_${strategy}_${kind}`,
            },
          });
          expect(await client.labStorm.findUniqueOrThrow({ where: { id: storm.id } })).toEqual(
            storm,
          );
        }
      }
      const labKey = {
        accountId: account.id,
        idemKey: "lab-key",
        responseStatus: 201,
        responseBody: { id: "order" },
      };
      const unconstrained = [
        await client.labCheckThenInsertKey.create({ data: labKey }),
        await client.labCheckThenInsertKey.create({ data: labKey }),
      ];
      expect(
        await client.labCheckThenInsertKey.findMany({
          where: { idemKey: "lab-key" },
          orderBy: { createdAt: "asc" },
        }),
      ).toEqual(expect.arrayContaining(unconstrained));
      const lateClaim = await client.labClaimAfterChargeKey.create({ data: labKey });
      expect(
        await client.labClaimAfterChargeKey.findUniqueOrThrow({
          where: { accountId_idemKey: { accountId: account.id, idemKey: "lab-key" } },
        }),
      ).toEqual(lateClaim);

      for (const [n, status] of Object.values(OrderStatus).entries()) {
        // One order per key row: the first order has the key, the others none.
        const keyId = n === 0 ? key.id : null;
        const order = await client.order.create({
          data: {
            accountId: account.id,
            idempotencyKeyId: keyId,
            idemKey: key.idemKey,
            cartId: "cart",
            status,
            currency: "usd",
            totalAmount: 1234,
            items: { create: [{ sku: "sku", name: "Name", unitAmount: 617, quantity: 2 }] },
            shipment: { create: {} },
          },
          include: { items: true, shipment: true },
        });
        for (const paymentStatus of Object.values(PaymentStatus)) {
          await client.payment.create({
            data: {
              accountId: account.id,
              orderId: paymentStatus === "succeeded" ? order.id : null,
              idempotencyKeyId: key.id,
              provider: "simulated",
              providerPaymentId: `pi_${status}_${paymentStatus}`,
              providerKey: `oncepay:${account.id}:${key.id}`,
              paymentMethod: "pm_card_visa",
              status: paymentStatus,
              amount: 1234,
              currency: "usd",
              declineCode: paymentStatus === "declined" ? "card_declined" : null,
              settledBy: paymentStatus === "succeeded" ? "webhook" : null,
              settledAt: paymentStatus === "succeeded" ? new Date() : null,
            },
          });
        }
        const loaded = await client.order.findUniqueOrThrow({
          where: { id: order.id },
          include: {
            items: true,
            payment: true,
            shipment: true,
            idempotencyKey: true,
            account: true,
          },
        });
        expect(loaded.status).toBe(status);
        expect(loaded.items).toEqual(order.items);
        expect(loaded.shipment).toEqual(order.shipment);
        expect(loaded.payment).toMatchObject({
          providerPaymentId: `pi_${status}_succeeded`,
          settledBy: "webhook",
        });
        expect(loaded.idempotencyKey?.id ?? null).toBe(keyId);
      }

      const event = await client.webhookEvent.create({
        data: {
          eventId: "evt_1",
          type: "payment_intent.succeeded",
          provider: "simulated",
          providerPaymentId: "pi_paid_succeeded",
          outcome: "paid",
        },
      });
      expect(await client.webhookEvent.findUniqueOrThrow({ where: { eventId: "evt_1" } })).toEqual(
        event,
      );
    });
  });

  it("delete a key's recorded requests and their counter with the key, and no other key's", async () => {
    await withMigratedClient(async (client) => {
      const account = await client.account.create({
        data: { tokenHash: "r".repeat(64), kind: "api" },
      });
      const keyWithRequests = async (idemKey: string) => {
        const key = await client.idempotencyKey.create({
          data: {
            scope: account.id,
            idemKey,
            operation: "checkout",
            fingerprint: "f".repeat(64),
            recoveryPoint: "claimed",
            expiresAt: new Date(),
          },
        });
        await client.idempotencyKeyRequestCount.create({ data: { keyId: key.id, seen: 2 } });
        await client.idempotencyKeyRequest.createMany({
          data: [1, 2].map((nth) => ({
            keyId: key.id,
            nth,
            requestId: `req-${idemKey}-${nth}`,
            receivedAt: new Date(),
            answeredAt: new Date(),
            status: 201,
            answer: "completed" as const,
          })),
        });
        return key;
      };
      const gone = await keyWithRequests("gone");
      const kept = await keyWithRequests("kept");
      await client.idempotencyKey.delete({ where: { id: gone.id } });
      expect(await client.idempotencyKeyRequest.count({ where: { keyId: gone.id } })).toBe(0);
      expect(await client.idempotencyKeyRequestCount.count({ where: { keyId: gone.id } })).toBe(0);
      expect(await client.idempotencyKeyRequest.count({ where: { keyId: kept.id } })).toBe(2);
      expect(await client.idempotencyKeyRequestCount.count({ where: { keyId: kept.id } })).toBe(1);
    });
  });

  it("keep orders and payments when their key is deleted (the link becomes null)", async () => {
    await withMigratedClient(async (client) => {
      const account = await client.account.create({
        data: { tokenHash: "k".repeat(64), kind: "api" },
      });
      const key = await client.idempotencyKey.create({
        data: {
          scope: account.id,
          idemKey: "k",
          operation: "checkout",
          fingerprint: "f".repeat(64),
          recoveryPoint: "claimed",
          expiresAt: new Date(),
        },
      });
      const order = await client.order.create({
        data: {
          accountId: account.id,
          idempotencyKeyId: key.id,
          cartId: "c",
          status: "paid",
          currency: "usd",
          totalAmount: 1,
        },
      });
      await client.idempotencyKey.delete({ where: { id: key.id } });
      expect(
        (await client.order.findUniqueOrThrow({ where: { id: order.id } })).idempotencyKeyId,
      ).toBeNull();
    });
  });
});

/** The migration that moved the shop's keys onto the engine package's table. */
const ENGINE_KEYS_MIGRATION = "20261206180000_engine_package_keys";

async function withSql<T>(url: string, run: (sql: pg.Client) => Promise<T>): Promise<T> {
  const sql = new pg.Client({ connectionString: url });
  await sql.connect();
  try {
    return await run(sql);
  } finally {
    await sql.end();
  }
}

// Prisma's migrations write @default(now()) as CURRENT_TIMESTAMP, the
// package's as now(): the same value (the transaction's start), which
// PostgreSQL keeps spelt as it was written.
const SAME_DEFAULT: Record<string, string> = { CURRENT_TIMESTAMP: "now()" };

/** What the engine's statements depend on in a key table: its columns and its CHECK constraints. */
async function keyTableShape(url: string) {
  return withSql(url, async (sql) => {
    const { rows: columns } = await sql.query<{ column_default: string | null }>(
      `SELECT column_name, data_type, character_maximum_length, datetime_precision, is_nullable, column_default
         FROM information_schema.columns
        WHERE table_schema = 'public' AND table_name = 'idempotency_keys'
        ORDER BY column_name`,
    );
    const { rows: checks } = await sql.query(
      `SELECT conname, pg_get_constraintdef(oid) AS definition FROM pg_constraint
        WHERE conrelid = 'public.idempotency_keys'::regclass AND contype = 'c'
        ORDER BY conname`,
    );
    return {
      columns: columns.map((column) => ({
        ...column,
        column_default:
          column.column_default === null
            ? null
            : (SAME_DEFAULT[column.column_default] ?? column.column_default),
      })),
      checks,
    };
  });
}

/**
 * The engine package's stores are written, and tested, against the table
 * its own migration makes; the shop reaches that table by migrating the
 * one it had, so the two must come out alike, and the shop's keys with it.
 */
describe("the shop's key table after its migrations", () => {
  it("is the engine package's: the same columns, types, nullability and defaults, and the same CHECK on the state", async () => {
    // Resolved as a user of the package finds it, through its exports.
    const packageMigration = await readFile(
      createRequire(import.meta.url).resolve(
        "@oncepay/idempotency/migrations/001_idempotency_keys.sql",
      ),
      "utf8",
    );
    const shop = await withFreshDatabase(async (url) => {
      await migrate(url);
      return keyTableShape(url);
    });
    const engine = await withFreshDatabase(async (url) => {
      await withSql(url, (sql) => sql.query(packageMigration));
      return keyTableShape(url);
    });
    expect(engine.columns.length).toBeGreaterThan(0);
    expect(shop).toEqual(engine);
  });

  it("keeps every key's place: one in flight at the point it reached (one at charged back at its charge), a complete one with its answer", async () => {
    const before = await mkdtemp(path.join(tmpdir(), "oncepay-migrations-"));
    try {
      await cp(MIGRATIONS_DIR, before, { recursive: true });
      await rm(path.join(before, ENGINE_KEYS_MIGRATION), { recursive: true });
      await withFreshDatabase(async (url) => {
        await migrate(url, before);
        const startedAt = "2026-12-05T10:00:00.125Z";
        const chargedAt = "2026-12-05T10:00:01.250Z";
        const createdAt = "2026-12-05T09:59:59.500Z";
        const cart = { cartId: "c", currency: "usd", totalAmount: 1234 };
        const charge = { status: "succeeded", providerPaymentId: "pi_1" };
        const accountId = await withSql(url, async (sql) => {
          const { rows } = await sql.query<{ id: string }>(
            `INSERT INTO accounts (token_hash, kind) VALUES ($1, 'api') RETURNING id`,
            ["m".repeat(64)],
          );
          const account = rows[0]!.id;
          const insert = `INSERT INTO idempotency_keys
              (account_id, idem_key, request_method, request_path, fingerprint, request_body, state,
               recovery_point, payment_request, charge_result, payment_started_at, charged_at,
               provider_key_generation, lease_owner, lease_expires_at, response_status,
               response_body, created_at, completed_at, expires_at)
            VALUES ($1, $2, 'POST', '/api/orders', $3, '{"cartId":"c"}', $4, $5, $6, $7, $8, $9, $10, $11,
                    CASE WHEN $11::uuid IS NOT NULL THEN now() + interval '30 seconds' END,
                    $12, $13, $14, $15, now() + interval '1 day')`;
          const key = (
            name: string,
            state: string,
            point: string,
            fields: {
              cart?: object;
              charge?: object;
              startedAt?: string;
              chargedAt?: string;
              generation?: number;
              response?: object;
            } = {},
          ) => {
            const complete = state === "complete";
            return sql.query(insert, [
              account,
              name,
              name.padEnd(64, "0"),
              state,
              point,
              fields.cart ?? null,
              fields.charge ?? null,
              fields.startedAt ?? null,
              fields.chargedAt ?? null,
              fields.generation ?? 0,
              complete ? null : crypto.randomUUID(),
              complete ? 201 : null,
              fields.response ?? null,
              createdAt,
              complete ? chargedAt : null,
            ]);
          };
          await key("claimed", "in_flight", "claimed");
          await key("started", "in_flight", "payment_started", { cart, startedAt, generation: 1 });
          // Its payment began before payment_started_at was recorded (and the cart kept).
          await key("started-unrecorded", "in_flight", "payment_started");
          await key("charged", "in_flight", "charged", {
            cart,
            charge,
            startedAt,
            chargedAt,
            generation: 1,
          });
          await key("finished", "complete", "finished", {
            cart,
            charge,
            startedAt,
            chargedAt,
            response: { object: "order" },
          });
          return account;
        });

        await migrate(url);

        const rows = await withSql(url, async (sql) => {
          const { rows } = await sql.query<{
            idem_key: string;
            point_reached_at: Date | null;
            points_reached: Record<string, string>;
          }>(
            `SELECT idem_key, scope, operation, fingerprint, request, state, recovery_point, progress,
                    point_reached_at, points_reached, side_effect_generation,
                    lease_expires_at > now() AS leased, response_status, response_body
               FROM idempotency_keys ORDER BY idem_key`,
          );
          // The times as instants: jsonb keeps them in the session's time zone.
          return rows.map((row) => ({
            ...row,
            point_reached_at: row.point_reached_at?.toISOString() ?? null,
            points_reached: Object.fromEntries(
              Object.entries(row.points_reached).map(([point, at]) => [
                point,
                new Date(at).toISOString(),
              ]),
            ),
          }));
        });
        const common = { scope: accountId, operation: "checkout", request: { cartId: "c" } };
        expect(rows).toEqual([
          {
            ...common,
            idem_key: "charged",
            fingerprint: "charged".padEnd(64, "0"),
            state: "in_flight",
            // Back at the charge, without its answer: the resume asks the
            // provider again under the same provider key (the generation kept).
            recovery_point: "payment_started",
            progress: { cart },
            point_reached_at: startedAt,
            points_reached: { payment_started: startedAt, charged: chargedAt },
            side_effect_generation: 1,
            leased: true,
            response_status: null,
            response_body: null,
          },
          {
            ...common,
            idem_key: "claimed",
            fingerprint: "claimed".padEnd(64, "0"),
            state: "in_flight",
            recovery_point: "claimed",
            progress: {},
            // Never moved: the reaper may forget it once its lease runs out, as before.
            point_reached_at: null,
            points_reached: {},
            side_effect_generation: 0,
            leased: true,
            response_status: null,
            response_body: null,
          },
          {
            ...common,
            idem_key: "finished",
            fingerprint: "finished".padEnd(64, "0"),
            state: "complete",
            recovery_point: "finished",
            progress: { cart, charge },
            point_reached_at: chargedAt,
            points_reached: { payment_started: startedAt, charged: chargedAt },
            side_effect_generation: 0,
            leased: null,
            response_status: 201,
            response_body: { object: "order" },
          },
          {
            ...common,
            idem_key: "started",
            fingerprint: "started".padEnd(64, "0"),
            state: "in_flight",
            recovery_point: "payment_started",
            progress: { cart },
            point_reached_at: startedAt,
            points_reached: { payment_started: startedAt },
            side_effect_generation: 1,
            leased: true,
            response_status: null,
            response_body: null,
          },
          {
            ...common,
            idem_key: "started-unrecorded",
            fingerprint: "started-unrecorded".padEnd(64, "0"),
            state: "in_flight",
            recovery_point: "payment_started",
            progress: {},
            // Moved, though when is unknown: the reaper must still spare it.
            point_reached_at: createdAt,
            points_reached: {},
            side_effect_generation: 0,
            leased: true,
            response_status: null,
            response_body: null,
          },
        ]);
      });
    } finally {
      await rm(before, { recursive: true, force: true });
    }
  });
});
