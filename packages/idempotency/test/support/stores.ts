import { PrismaPg } from "@prisma/adapter-pg";
import { pgStore, type PgTransaction } from "../../src/pg.js";
import { prismaStore } from "../../src/prisma.js";
import type { KeyStore, KeyTimings } from "../../src/store.js";
import type { TestDatabase } from "./database.js";
import { PrismaClient, type Prisma } from "../prisma/generated/client.js";

/**
 * One store under test, with how a test operation writes its own row in the
 * store's transaction: SQL on the pg client, a model's `create` on Prisma's.
 */
export interface StoreUnderTest<Tx> {
  store: KeyStore<Tx>;
  writeEffect(tx: Tx, row: { scope: string; label: string; keyId: string }): Promise<void>;
  close(): Promise<void>;
}

export type StoreKind = "pg" | "prisma";
export const STORE_KINDS: readonly StoreKind[] = ["pg", "prisma"];

/** What a store is opened on: the test's database, or a crash server's own connection to it. */
export type StoreConnection = Pick<TestDatabase, "url" | "concurrent" | "statements" | "pool">;

export function storeUnderTest(
  kind: StoreKind,
  database: StoreConnection,
  timings: KeyTimings,
): StoreUnderTest<PgTransaction> | StoreUnderTest<Prisma.TransactionClient> {
  return kind === "pg" ? pgUnderTest(database, timings) : prismaUnderTest(database, timings);
}

function pgUnderTest(
  database: StoreConnection,
  timings: KeyTimings,
): StoreUnderTest<PgTransaction> {
  return {
    store: pgStore(database.pool, { ...timings, statements: database.statements }),
    async writeEffect(tx, { scope, label, keyId }) {
      await tx.query(`INSERT INTO effects (scope, label, key_id) VALUES ($1, $2, $3)`, [
        scope,
        label,
        keyId,
      ]);
    },
    close: async () => {},
  };
}

function prismaUnderTest(
  database: StoreConnection,
  timings: KeyTimings,
): StoreUnderTest<Prisma.TransactionClient> {
  // On PGlite one connection, as the pg pool keeps to (database.ts).
  const adapter = new PrismaPg({
    connectionString: database.url,
    max: database.concurrent ? 20 : 1,
  });
  const prisma = new PrismaClient({ adapter });
  return {
    store: prismaStore(prisma, timings),
    async writeEffect(tx, row) {
      await tx.effect.create({ data: row, select: { id: true } });
    },
    close: () => prisma.$disconnect(),
  };
}
