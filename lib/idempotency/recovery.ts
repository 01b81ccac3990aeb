import { errorFields, log } from "@/lib/log";
import { resumeAbandoned, type IdempotentEndpoint } from "@/lib/idempotency/idempotent-endpoint";
import type { PostgresIdempotencyStore, Transaction } from "@/lib/idempotency/postgres-store";

/**
 * The recovery worker: finds keys whose attempt died while holding them (the
 * lease ran out) and finishes or releases them, so no key stays in flight for
 * longer than a lease plus one worker interval even if its client never
 * retries.
 *
 * - claimed: nothing was charged yet, so the key is released; a retry runs afresh.
 * - payment_started: the charge may have happened; the request is resumed from
 *   its stored body (the provider call is idempotent) and completed.
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

export interface RecoveryDeps {
  store: PostgresIdempotencyStore;
  /** The endpoint that owns each path, to resume its requests. */
  endpointFor(method: string, path: string): IdempotentEndpoint<unknown, Transaction> | undefined;
  batchSize: number;
}

export async function recoverAbandonedKeys({ store, endpointFor, batchSize }: RecoveryDeps): Promise<RecoveryReport> {
  const report: RecoveryReport = { examined: 0, released: 0, completed: 0, skipped: 0, failed: 0 };
  for (const abandoned of await store.findAbandonedKeys(batchSize)) {
    report.examined++;
    const claim = await store.takeOverKey(abandoned.keyId);
    if (!claim) {
      report.skipped++; // a retry or another instance got there first
      continue;
    }
    if (claim.recoveryPoint === "claimed") {
      await store.releaseKey(claim);
      report.released++;
      continue;
    }
    const endpoint = endpointFor(abandoned.method, abandoned.path);
    if (!endpoint) {
      log.error("recovery.unknown_endpoint", { keyId: abandoned.keyId, method: abandoned.method, path: abandoned.path });
      report.failed++;
      continue;
    }
    try {
      const outcome = await resumeAbandoned(endpoint, claim, abandoned);
      if (outcome.kind === "completed") report.completed++;
      else report.failed++;
    } catch (error) {
      log.error("recovery.resume_failed", { keyId: abandoned.keyId, ...errorFields(error) });
      report.failed++;
    }
  }
  if (report.examined > 0) log.info("recovery.run", { ...report });
  return report;
}
