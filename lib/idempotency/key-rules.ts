import { assertNever } from "@/lib/assert-never";
import { randomUUID } from "node:crypto";
import type { Claim, ClaimRequest, ClaimResult, RecoveryPoint } from "@/lib/idempotency/store";
import type { StoredResponse } from "@oncepay/idempotency";

/**
 * What every idempotency store shares: the rules about time, kept on the
 * database's clock, and how a taken-over key's row becomes a claim.
 */

export interface KeyTimings {
  /** How long one attempt holds the key before another may take it over. */
  leaseSeconds: number;
  /** How long a key (and its stored response) lives. */
  ttlSeconds: number;
}

/**
 * When a key past its TTL may be deleted (by the reaper, or by a claim that
 * then starts the key afresh): when it is complete, or in flight at `claimed`
 * with its lease run out, since then nothing was charged and nobody holds it.
 * A key whose payment started is never deleted while in flight, however old:
 * its charge may have gone through, and without the row nothing would write
 * its order unless the client retried within the provider's memory of its
 * key. The recovery worker finishes such a key instead.
 */
export const DISPOSABLE_WHEN_EXPIRED = `(expires_at <= now()
  AND (state = 'complete' OR (recovery_point = 'claimed' AND coalesce(lease_expires_at <= now(), true))))`;

// A key can vanish between a claim's failed INSERT and its read (released by
// a failed attempt, or expired and deleted). Each pass of a claim makes
// progress; three passes without an answer means heavy churn on one key,
// and the client is told to retry.
export const MAX_CLAIM_PASSES = 3;

/** What a takeover reads of the key, as both stores name it. */
export interface TakenOverRow {
  recovery_point: RecoveryPoint;
  payment_request: unknown;
  charge_result: unknown;
  payment_started_at: Date | null;
  provider_key_generation: number;
}

/** The claim a takeover hands back: what a resume needs depends on how far the dead attempt got. */
export function takenOverClaim(keyId: string, leaseOwner: string, row: TakenOverRow): Claim {
  const taken = {
    keyId,
    leaseOwner,
    tookOver: true,
    providerKeyGeneration: row.provider_key_generation,
  };
  // Keys whose payment started before the column existed have no start time.
  const startedAt =
    row.payment_started_at === null ? {} : { paymentStartedAt: row.payment_started_at };
  switch (row.recovery_point) {
    case "claimed":
      return { ...taken, recoveryPoint: "claimed" };
    case "payment_started":
      return {
        ...taken,
        ...startedAt,
        recoveryPoint: "payment_started",
        paymentRequest: row.payment_request,
      };
    case "charged":
      return {
        ...taken,
        ...startedAt,
        recoveryPoint: "charged",
        paymentRequest: row.payment_request,
        chargeResult: row.charge_result,
      };
    case "finished":
      // Completion sets `finished` and `complete` together, and a takeover matches only in-flight rows.
      throw new Error(`Idempotency key ${keyId} is in flight at recovery point finished`);
    default:
      return assertNever(row.recovery_point, "recovery point");
  }
}

/** A key's existing row, as a claim that could not insert one reads it. */
export interface ExistingKey {
  id: string;
  fingerprint: string;
  complete: boolean;
  /** Past its TTL and safe to delete (DISPOSABLE_WHEN_EXPIRED). */
  disposable: boolean;
  leaseExpired: boolean;
  response(): StoredResponse;
}

/** The three steps a claim needs of a store; `claimKey` puts them in order. */
export interface ClaimSteps {
  /** INSERT … ON CONFLICT DO NOTHING: the new row's id, or the row that was there (null: none visible yet). */
  insertOrRead(
    request: ClaimRequest,
    leaseOwner: string,
  ): Promise<{ claimedId: string } | { claimedId: null; existing: ExistingKey | null }>;
  /** Deletes the key if it is still disposable (the condition repeated, so a key taken over meanwhile stays). */
  deleteIfDisposable(keyId: string): Promise<void>;
  takeOverKey(keyId: string): Promise<Claim | undefined>;
}

/**
 * The claim, the same rules in the same order for every store: a new row is
 * ours; a disposable one is deleted and the key claimed afresh; otherwise
 * the row answers (another request under the key: 422; complete: replay; a
 * live lease: 409), and a lease that ran out is taken over.
 */
export async function claimKey(steps: ClaimSteps, request: ClaimRequest): Promise<ClaimResult> {
  for (let pass = 0; pass < MAX_CLAIM_PASSES; pass++) {
    const leaseOwner = randomUUID();
    const attempt = await steps.insertOrRead(request, leaseOwner);
    if (attempt.claimedId !== null) {
      const claim: Claim = {
        keyId: attempt.claimedId,
        leaseOwner,
        recoveryPoint: "claimed",
        tookOver: false,
        providerKeyGeneration: 0,
      };
      return { kind: "claimed", claim };
    }
    const { existing } = attempt;
    // No row at all: released, reaped, or committed after the read's snapshot. The next pass sees which.
    if (!existing) continue;
    if (existing.disposable) {
      await steps.deleteIfDisposable(existing.id);
      continue;
    }
    if (existing.fingerprint !== request.fingerprint) return { kind: "fingerprint-mismatch" };
    if (existing.complete) return { kind: "replay", stored: existing.response() };
    if (!existing.leaseExpired) return { kind: "in-flight" };
    const takenOver = await steps.takeOverKey(existing.id);
    if (takenOver) return { kind: "claimed", claim: takenOver };
  }
  return { kind: "in-flight" };
}
