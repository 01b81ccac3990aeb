import { isDatabaseUnavailable } from "./database-errors.js";
import { SqlKeyStore } from "./sql-key-store.js";
import type { KeyStore, KeyTimings } from "./store.js";

/**
 * The key store on a Prisma client, for an app whose writes speak Prisma:
 * an atomic phase's `tx` is the client of an interactive `$transaction`, so
 * the operation's rows (created with its models, nested writes and all) and
 * the key's move commit together. The key's own steps are the same
 * statements as pgStore's, run with `$queryRawUnsafe` (every value a `$n`
 * parameter): the ORM has no words for ON CONFLICT DO NOTHING or for the
 * database's clock, and one statement a step keeps a checkout's round trips
 * as few as plain SQL's.
 */
export interface PrismaQueries {
  $queryRawUnsafe<T = unknown>(query: string, ...values: unknown[]): PromiseLike<T>;
}

/** What the store needs of a Prisma client; `Tx` is its transaction client (Prisma.TransactionClient). */
export interface PrismaClientLike<Tx extends PrismaQueries> extends PrismaQueries {
  $transaction<R>(work: (tx: Tx) => Promise<R>): Promise<R>;
}

export function prismaStore<Tx extends PrismaQueries>(
  prisma: PrismaClientLike<Tx>,
  timings: KeyTimings,
): KeyStore<Tx> {
  const queryOn =
    (client: PrismaQueries) =>
    <Row>(text: string, values: readonly unknown[]) =>
      Promise.resolve(client.$queryRawUnsafe<Row[]>(text, ...values));
  return new SqlKeyStore<Tx>(
    {
      query: queryOn(prisma),
      transaction: (work) => prisma.$transaction((tx) => work(tx, queryOn(tx))),
      isUnavailable: isDatabaseUnavailable,
    },
    timings,
  );
}
