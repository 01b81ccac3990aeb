import { Prisma, type PrismaClient } from "@/lib/generated/prisma/client";
import { DISPOSABLE_WHEN_EXPIRED } from "@/lib/idempotency/key-rules";
import { log } from "@/lib/log";

/**
 * Deletes keys past their TTL in bounded batches. Orders and payments keep
 * their data (their link to the key becomes NULL). `FOR UPDATE SKIP LOCKED`
 * means the reaper never waits on, nor blocks, a claim or a completion that
 * holds a key's row, and several instances reaping at once share the work.
 * An in-flight key is reaped only at `claimed` once its lease has run out
 * (nothing was charged); one whose payment began is left to the recovery
 * worker, which finishes it (see DISPOSABLE_WHEN_EXPIRED).
 */
export interface ReaperOptions {
  batchSize: number;
  /** Stop after this many batches, so one run never hogs the database. */
  maxBatches: number;
}

export async function reapExpiredKeys(
  db: PrismaClient,
  { batchSize, maxBatches }: ReaperOptions,
): Promise<number> {
  let deleted = 0;
  for (let batch = 0; batch < maxBatches; batch++) {
    const count = await db.$executeRaw`
      DELETE FROM idempotency_keys
       WHERE id IN (
         SELECT id FROM idempotency_keys
          WHERE ${Prisma.raw(DISPOSABLE_WHEN_EXPIRED)}
          ORDER BY expires_at
          LIMIT ${batchSize}
          FOR UPDATE SKIP LOCKED)`;
    deleted += count;
    if (count < batchSize) break;
  }
  if (deleted > 0) log.info("reaper.run", { deleted });
  return deleted;
}
