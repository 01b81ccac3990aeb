import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { migrate } from "@/lib/db/migrate";
import { PrismaClient } from "@/lib/generated/prisma/client";
import {
  AccountKind,
  KeyRequestAnswer,
  KeyState,
  LabRunKind,
  LabStrategy,
  OrderSource,
  OrderStatus,
  PaymentStatus,
  RecoveryPoint,
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
      for (const [index, state] of Object.values(KeyState).entries()) {
        for (const recoveryPoint of Object.values(RecoveryPoint)) {
          keys.push(
            await client.idempotencyKey.create({
              data: {
                accountId: account.id,
                idemKey: `${state}-${recoveryPoint}-${index}`,
                requestMethod: "POST",
                requestPath: "/api/orders",
                fingerprint: "f".repeat(64),
                state,
                recoveryPoint,
                leaseOwner: crypto.randomUUID(),
                leaseExpiresAt: now,
                responseStatus: 201,
                responseHeaders: { Location: "/x" },
                responseBody: { nested: { list: [1, "two", null, true] } },
                requestBody: { cartId: "c", items: [{ sku: "s", quantity: 1 }] },
                paymentRequest: { total: 1234 },
                chargeResult: { status: "succeeded", providerPaymentId: "pi_1" },
                paymentStartedAt: now,
                chargedAt: now,
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
          await client.idempotencyKeyRequest.findUniqueOrThrow({ where: { id: request.id } }),
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

      for (const status of Object.values(OrderStatus)) {
        const order = await client.order.create({
          data: {
            accountId: account.id,
            idempotencyKeyId: key.id,
            idemKey: key.idemKey,
            cartId: "cart",
            status,
            currency: "usd",
            totalAmount: 1234,
            items: { create: [{ sku: "sku", name: "Name", unitAmount: 617, quantity: 2 }] },
          },
          include: { items: true },
        });
        for (const paymentStatus of Object.values(PaymentStatus)) {
          await client.payment.create({
            data: {
              accountId: account.id,
              orderId: paymentStatus === "succeeded" ? order.id : null,
              idempotencyKeyId: key.id,
              provider: "simulated",
              providerPaymentId: `pi_${paymentStatus}`,
              providerKey: `oncepay:${account.id}:${key.id}`,
              paymentMethod: "pm_card_visa",
              status: paymentStatus,
              amount: 1234,
              currency: "usd",
              declineCode: paymentStatus === "declined" ? "card_declined" : null,
            },
          });
        }
        const loaded = await client.order.findUniqueOrThrow({
          where: { id: order.id },
          include: { items: true, payment: true, idempotencyKey: true, account: true },
        });
        expect(loaded.items).toEqual(order.items);
        expect(loaded.payment?.providerPaymentId).toBe("pi_succeeded");
        expect(loaded.idempotencyKey?.id).toBe(key.id);
      }
    });
  });

  it("delete a key's recorded requests and their counter with the key", async () => {
    await withMigratedClient(async (client) => {
      const account = await client.account.create({
        data: { tokenHash: "r".repeat(64), kind: "api" },
      });
      const key = await client.idempotencyKey.create({
        data: {
          accountId: account.id,
          idemKey: "k",
          requestMethod: "POST",
          requestPath: "/api/orders",
          fingerprint: "f".repeat(64),
          expiresAt: new Date(),
          requestCount: { create: { seen: 1 } },
          requests: {
            create: {
              nth: 1,
              requestId: "req-1",
              receivedAt: new Date(),
              answeredAt: new Date(),
              status: 201,
              answer: "completed",
            },
          },
        },
      });
      await client.idempotencyKey.delete({ where: { id: key.id } });
      expect(await client.idempotencyKeyRequest.count({ where: { keyId: key.id } })).toBe(0);
      expect(await client.idempotencyKeyRequestCount.count({ where: { keyId: key.id } })).toBe(0);
    });
  });

  it("keep orders and payments when their key is deleted (the link becomes null)", async () => {
    await withMigratedClient(async (client) => {
      const account = await client.account.create({
        data: { tokenHash: "k".repeat(64), kind: "api" },
      });
      const key = await client.idempotencyKey.create({
        data: {
          accountId: account.id,
          idemKey: "k",
          requestMethod: "POST",
          requestPath: "/api/orders",
          fingerprint: "f".repeat(64),
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
