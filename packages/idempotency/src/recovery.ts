import type { Engine } from "./engine.js";
import type { AbandonedKey } from "./store.js";

/**
 * The recovery worker: finds keys whose attempt died holding them (the lease
 * ran out) and releases or finishes them, so no key stays in flight for
 * longer than a lease and one run's interval even if its client never
 * retries.
 *
 * - A key that never reached a recovery point: nothing but the claim was
 *   written, so it is released, and a retry starts afresh.
 * - A key that did: its operation is resumed at its recovery point, from
 *   the request stored with the key (a side effect asks again under the
 *   same side-effect key, so the service answers with its first result).
 *
 * Safe with several app instances: each key is taken over by a conditional
 * UPDATE, so one instance wins it and the others skip it.
 */
export interface RecoveryReport {
  examined: number;
  released: number;
  completed: number;
  skipped: number;
  failed: number;
}

export interface RecoveryOptions {
  /** Keys looked at in one run. */
  batchSize: number;
  /**
   * Keys resumed at once. A resume mostly waits on a service, so one at a
   * time falls behind as soon as keys are abandoned faster than one round
   * trip each; a few at a time keeps up without crowding live requests out
   * of the connection pool.
   */
  concurrency?: number;
  /** Wraps the work on one key (to give its log lines the key's ids, say). */
  aroundKey?<T>(key: AbandonedKey, work: () => Promise<T>): Promise<T>;
}

const DEFAULT_CONCURRENCY = 4;

export async function recoverAbandonedKeys<Tx>(
  engine: Engine<Tx>,
  { batchSize, concurrency = DEFAULT_CONCURRENCY, aroundKey }: RecoveryOptions,
): Promise<RecoveryReport> {
  const report: RecoveryReport = { examined: 0, released: 0, completed: 0, skipped: 0, failed: 0 };
  const abandoned = await engine.store.findAbandoned(batchSize);
  const results = await mapWithLimit(abandoned, concurrency, (key) => {
    const work = async () => {
      const result = await recoverOne(engine, key);
      if (result !== "skipped") engine.reporter.info("recovery.key", { keyId: key.keyId, result });
      return result;
    };
    return aroundKey ? aroundKey(key, work) : work();
  });
  for (const result of results) report[result]++;
  report.examined = abandoned.length;
  if (report.examined > 0) engine.reporter.info("recovery.run", { ...report });
  return report;
}

/** Takes one abandoned key over and releases or finishes it; another worker may have got there first. */
async function recoverOne<Tx>(
  engine: Engine<Tx>,
  abandoned: AbandonedKey,
): Promise<Exclude<keyof RecoveryReport, "examined">> {
  // One key's trouble (the database blinked, a service is down) must not end
  // the run: the key keeps its place and the next run tries again.
  try {
    const claim = await engine.store.takeOver(abandoned.keyId);
    if (!claim) return "skipped";
    if (!claim.moved) {
      await engine.store.release(claim);
      return "released";
    }
    const outcome = await engine.resume(claim, abandoned);
    return outcome.kind === "completed" ? "completed" : "failed";
  } catch (error) {
    engine.reporter.error("recovery.resume_failed", { keyId: abandoned.keyId, error });
    return "failed";
  }
}

/** Runs `work` over `items`, at most `limit` at once, keeping their order. */
async function mapWithLimit<T, R>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(Math.max(1, limit), items.length) }, lane));
  return results;
}
