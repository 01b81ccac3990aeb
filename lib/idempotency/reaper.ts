import { log } from "@/lib/log";

/**
 * Deletes keys past their TTL in bounded batches, with the engine's own
 * rule of which are safe to forget (complete ones, and in-flight ones that
 * never moved past their claim and whose lease ran out; one whose payment
 * began is left to the recovery worker, which finishes it). Orders and
 * payments keep their data (their link to the key becomes NULL). The
 * store's DELETE skips rows another transaction holds, so the reaper never
 * waits on, nor blocks, a claim or a completion, and several instances
 * reaping at once share the work.
 */
export interface ReaperOptions {
  batchSize: number;
  /** Stop after this many batches, so one run never hogs the database. */
  maxBatches: number;
}

export async function reapExpiredKeys(
  keys: { deleteExpired(limit: number): Promise<number> },
  { batchSize, maxBatches }: ReaperOptions,
): Promise<number> {
  let deleted = 0;
  for (let batch = 0; batch < maxBatches; batch++) {
    const count = await keys.deleteExpired(batchSize);
    deleted += count;
    if (count < batchSize) break;
  }
  if (deleted > 0) log.info("reaper.run", { deleted });
  return deleted;
}
