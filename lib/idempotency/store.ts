import type { StoredResponse } from "@/lib/idempotency/stored-response";

/**
 * The persistence seam of the idempotency layer. The endpoint wrapper knows
 * only these operations; lib/idempotency/postgres-store.ts is the real one.
 * `Rows` is how the caller hands over its own writes, so the result and the
 * completed key commit together (for PostgreSQL: CTEs of the one statement
 * that completes the key).
 */
export interface ClaimRequest {
  accountId: string;
  key: string;
  method: string;
  path: string;
  fingerprint: string;
  /** The request's JSON body, kept so that a later attempt can resume it. */
  body: unknown;
}

/**
 * How far an in-flight request got, as in brandur's rocket-rides-atomic:
 * claimed (nothing done yet), payment_started (the side effect was asked
 * for; it may or may not have happened), charged (it answered, and its
 * result is stored with the key), finished (the key is complete).
 */
export type RecoveryPoint = "claimed" | "payment_started" | "charged" | "finished";

/** Where an attempt holding a key can be: a key at `finished` is complete, and nobody holds it. */
export type InFlightRecoveryPoint = Exclude<RecoveryPoint, "finished">;

/** Proof that this attempt holds the key: the lease owner is checked on every write. */
export interface Claim {
  keyId: string;
  leaseOwner: string;
  recoveryPoint: InFlightRecoveryPoint;
  /** True when this attempt took the key over from one whose lease expired. */
  tookOver: boolean;
  /** From `payment_started` on: what the side effect was asked to do, so a resumed request repeats exactly that. */
  sideEffectRequest?: unknown;
  /** From `payment_started` on: when the side effect was first asked for (the database's clock). */
  sideEffectStartedAt?: Date;
  /** At `charged`: what the side effect returned, so a resumed request need not repeat it. */
  sideEffectResult?: unknown;
}

export type ClaimResult =
  | { kind: "claimed"; claim: Claim }
  | { kind: "replay"; stored: StoredResponse }
  | { kind: "in-flight" }
  | { kind: "fingerprint-mismatch" };

/** An in-flight key whose holder's lease ran out: its attempt crashed or stalled. */
export interface AbandonedKey {
  keyId: string;
  accountId: string;
  idempotencyKey: string;
  method: string;
  path: string;
  requestBody: unknown;
}

/**
 * The first look at a key: the claim (with the answer to the question asked
 * alongside it), the answer the key's row gives, or that claimKey may still
 * take it.
 */
export type LookUpResult =
  | { kind: "claimed"; claim: Claim; answer: unknown }
  | Exclude<ClaimResult, { kind: "claimed" }>
  | { kind: "claimable" };

/** What completes a key: the response to store (and send), and the caller's rows that commit with it or not at all. */
export interface KeyCompletion<Rows> {
  response: StoredResponse;
  rows?: Rows;
}

/**
 * `Question`: what an endpoint may ask of the database for a request that
 * claims a new key (its admission: a rate limit's count, say), asked in the
 * claim's own statement so that it costs no round trip of its own.
 */
export interface IdempotencyStore<Rows, Question = never> {
  /**
   * One round trip: reads the key's row, and claims the key when it has
   * none, asking `alongside` only then. A replay, a 409 or a 422 is answered
   * from the row, writing nothing; a first-time request comes back claimed,
   * with the question's answer. "claimable": a row that claimKey may delete
   * (expired) or take over (its lease ran out), or a concurrent claim this
   * look could not see yet; claimKey sorts it out.
   */
  lookUpOrClaim(request: ClaimRequest, alongside?: Question): Promise<LookUpResult>;
  claimKey(request: ClaimRequest): Promise<ClaimResult>;
  /** Asks the question by itself, for a key claimKey claims. */
  ask(question: Question): Promise<unknown>;
  /** In-flight keys whose lease ran out, oldest first: the recovery worker's work list. */
  findAbandonedKeys(limit: number): Promise<AbandonedKey[]>;
  /** Takes over an in-flight key whose lease expired; undefined if someone else won or it finished. */
  takeOverKey(keyId: string): Promise<Claim | undefined>;
  /**
   * Records that the side effect is about to start and what it will be asked
   * to do, and renews the lease, so the side effect gets a whole lease however
   * long the attempt took to get here. Throws LeaseLostError if the key is no
   * longer ours.
   */
  markSideEffectStarted(claim: Claim, request: unknown): Promise<void>;
  /** Keeps the side effect's result with the key (recovery point `charged`); throws LeaseLostError if the key is no longer ours. */
  recordSideEffectResult(claim: Claim, result: unknown): Promise<void>;
  /**
   * Ends our lease now but keeps the key in flight at its recovery point:
   * this attempt has stopped, so the next retry (or the recovery worker) may
   * take the key over and resume it at once instead of waiting out the lease.
   */
  endLease(claim: Claim): Promise<void>;
  /**
   * Writes the caller's rows and marks the key complete with its response,
   * atomically; throws LeaseLostError, having written nothing, if the key is
   * no longer ours.
   */
  completeKey(claim: Claim, completion: KeyCompletion<Rows>): Promise<void>;
  /** Deletes our claim so a retry with the same key runs afresh. */
  releaseKey(claim: Claim): Promise<void>;
}

/** Another attempt took the key over (our lease expired); our writes were rolled back. */
export class LeaseLostError extends Error {
  constructor(keyId: string) {
    super(`Lease on idempotency key ${keyId} was lost to another attempt`);
    this.name = "LeaseLostError";
  }
}
