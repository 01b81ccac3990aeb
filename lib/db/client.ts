import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient } from "@/lib/generated/prisma/client";
import { serverEnv } from "@/lib/env";

export type Database = PrismaClient;

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
