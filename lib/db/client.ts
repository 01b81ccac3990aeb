import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient, type Prisma } from "@/lib/generated/prisma/client";
import { serverEnv } from "@/lib/env";

export type Database = PrismaClient;

/**
 * The handle of one interactive transaction: what code that writes inside
 * another module's transaction (the order and the completed key together)
 * is given. Inside it, use this and never the outer client.
 */
export type Transaction = Prisma.TransactionClient;

// Cached on globalThis so that dev-mode hot reloads reuse one pool instead of
// leaving the old one holding every connection slot of the embedded database.
const globalForPrisma = globalThis as typeof globalThis & { oncepayPrisma?: PrismaClient };

/** The shared Prisma client, created on first use so `next build` never connects. */
export function db(): PrismaClient {
  if (!globalForPrisma.oncepayPrisma) {
    const env = serverEnv();
    const adapter = new PrismaPg({ connectionString: env.DATABASE_URL, max: env.DATABASE_POOL_MAX });
    globalForPrisma.oncepayPrisma = new PrismaClient({ adapter });
  }
  return globalForPrisma.oncepayPrisma;
}
