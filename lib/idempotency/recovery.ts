import { assertNever } from "@/lib/assert-never";
import { mapWithLimit } from "@/lib/map-with-limit";
import { errorFields, log } from "@/lib/log";
import { runWithContext } from "@/lib/observability/request-context";
import type { Resumer } from "@/lib/idempotency/idempotent-endpoint";
import type { AbandonedKey, Claim, IdempotencyStore } from "@/lib/idempotency/store";

/**
 * The recovery worker: finds keys whose attempt died while holding them (the
 * lease ran out) and finishes or releases them, so no key stays in flight for
 * longer than a lease plus one worker interval even if its client never
 * retries.
 *
 * - claimed: nothing was charged yet, so the key is released; a retry runs afresh.
 * - payment_started: the charge may have happened; the request is resumed
 *   with the cart stored when the charge began (the provider call carries the
 *   same provider key, so it returns the first charge) and completed.
 * - charged: the provider's answer is stored; the order is written from it.
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
  store: IdempotencyStore;
  /** How to resume a request of the endpoint that owns each path. */
  resumerFor(method: string, path: string): Resumer | undefined;
  batchSize: number;
  /**
   * Keys resumed at once. Each resume mostly waits on the provider, so one
   * at a time falls behind as soon as keys are abandoned faster than one
   * provider round trip each (a soak showed it: an instance crashing many
   * checkouts at once); a few at a time keeps up without crowding out live
   * checkouts from the connection pool.
   */
  concurrency?: number;
}

const DEFAULT_CONCURRENCY = 4;

export async function recoverAbandonedKeys({
  store,
  resumerFor,
  batchSize,
  concurrency = DEFAULT_CONCURRENCY,
}: RecoveryDeps): Promise<RecoveryReport> {
  const report: RecoveryReport = { examined: 0, released: 0, completed: 0, skipped: 0, failed: 0 };
  const abandoned = await store.findAbandonedKeys(batchSize);
  const outcomes = await mapWithLimit(abandoned, concurrency, (key) =>
    // The key's lines carry its ids, as its attempts' lines do, so one
    // search finds the request's whole story, whichever instance finished it.
    runWithContext(
      { keyId: key.keyId, accountId: key.accountId, idempotencyKey: key.idempotencyKey },
      async () => {
        const result = await recoverOne({ store, resumerFor }, key);
        if (result !== "skipped") log.info("recovery.key", { result });
        return result;
      },
    ),
  );
  for (const outcome of outcomes) report[outcome]++;
  report.examined = abandoned.length;
  if (report.examined > 0) log.info("recovery.run", { ...report });
  return report;
}

/** Takes one abandoned key over and releases or finishes it; another worker may have got there first. */
async function recoverOne(
  deps: Pick<RecoveryDeps, "store" | "resumerFor">,
  abandoned: AbandonedKey,
): Promise<Exclude<keyof RecoveryReport, "examined">> {
  // One key's trouble (the database blinked, the provider is down) must not
  // end the run: the key keeps its place and the next run tries again.
  try {
    const claim = await deps.store.takeOverKey(abandoned.keyId);
    if (!claim) return "skipped"; // a retry or another instance got there first
    return await recoverKey(deps, claim, abandoned);
  } catch (error) {
    log.error("recovery.resume_failed", { keyId: abandoned.keyId, ...errorFields(error) });
    return "failed";
  }
}

/** Releases (before the charge) or finishes (after it) one key this worker has taken over. */
async function recoverKey(
  deps: Pick<RecoveryDeps, "store" | "resumerFor">,
  claim: Claim,
  abandoned: AbandonedKey,
): Promise<"released" | "completed" | "failed"> {
  switch (claim.recoveryPoint) {
    case "claimed": // nothing was charged: let the next retry run afresh
      await deps.store.releaseKey(claim);
      return "released";
    case "payment_started": // the charge may have happened: repeat it under the same provider key
    case "charged": // the provider answered: write the order from its stored answer
      return resumeKey(deps, claim, abandoned);
    default:
      return assertNever(claim.recoveryPoint, "recovery point");
  }
}

async function resumeKey(
  { resumerFor }: Pick<RecoveryDeps, "resumerFor">,
  claim: Claim,
  abandoned: AbandonedKey,
): Promise<"completed" | "failed"> {
  const resume = resumerFor(abandoned.method, abandoned.path);
  if (!resume) {
    log.error("recovery.unknown_endpoint", {
      keyId: abandoned.keyId,
      method: abandoned.method,
      path: abandoned.path,
    });
    return "failed";
  }
  const outcome = await resume(claim, abandoned);
  return outcome.kind === "completed" ? "completed" : "failed";
}
