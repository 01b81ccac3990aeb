import type { JsonObject } from "./operation.js";
import type { StoredResponse } from "./stored-response.js";

/**
 * The persistence seam: the engine and the recovery worker know only these
 * steps. Two stores implement them with the same statements and one
 * contract suite: pgStore (a `pg` pool; a phase's `Tx` is a client inside
 * BEGIN … COMMIT) and prismaStore (a Prisma client; `Tx` is the client of
 * an interactive `$transaction`).
 */
export interface KeyStore<Tx> {
  /**
   * Claims the key, or says why not: a replay, a 409 (another attempt holds
   * it) or a 422 (another request under it), answered from its row. A key
   * past its time to live is started afresh; one whose holder's lease ran
   * out is taken over (`tookOver`), to be resumed where it stopped.
   * Exactly one of any number of concurrent claims of one key wins.
   */
  claim(request: ClaimRequest): Promise<ClaimResult>;
  /** Takes over an in-flight key whose lease ran out; undefined if another attempt won it or it finished. */
  takeOver(keyId: string): Promise<Claim | undefined>;
  /**
   * Marks an in-flight key as awaited by a request (Prefer: wait), so that
   * its next change notifies every instance; false when it is in flight no
   * longer, and the request should claim again.
   */
  markAwaited(scope: string, key: string): Promise<boolean>;
  /** In-flight keys whose lease ran out, oldest first: the recovery worker's work list. */
  findAbandoned(limit: number): Promise<AbandonedKey[]>;
  /**
   * Runs an atomic phase in a transaction and, in the same commit, moves
   * the key as its step says: on to the next point (renewing the lease) or
   * complete with its response. `passing` names the point a side effect's
   * answer took the key to without a commit of its own: it is recorded
   * among the points reached, in this commit. Throws LeaseLostError,
   * writing nothing, when the key is no longer this claim's.
   */
  commitPhase(
    claim: Claim,
    phase: (tx: Tx) => Promise<KeyMove>,
    passing?: string,
  ): Promise<KeyMove>;
  /**
   * Moves the key as a side effect's step says, in one statement. `durable:
   * false` lets it commit without waiting for the disk: losing it only sends
   * the key back to the side effect, which runs again under the same key.
   */
  move(claim: Claim, move: KeyMove, options: { durable: boolean }): Promise<void>;
  /** Moves on to the next side-effect key, durably, and renews the lease. */
  nextSideEffectKey(claim: Claim): Promise<void>;
  /** Ends the lease now but keeps the key in flight, so the next attempt resumes it at once. */
  endLease(claim: Claim): Promise<void>;
  /** Deletes the claim, so a retry with the same key starts afresh. */
  release(claim: Claim): Promise<void>;
  /** Deletes up to `limit` keys past their time to live that are safe to forget; returns how many. */
  deleteExpired(limit: number): Promise<number>;
  /** Whether an error means the database could not be reached (503, retry), rather than a fault (500). */
  isUnavailable(error: unknown): boolean;
}

/**
 * How long the key of an answer lives, for the client (the adapter writes it
 * as headers): when its stored result is forgotten, by the database's clock,
 * and the policy behind it.
 */
export interface KeyLifetime {
  /** When the key and its stored response may be forgotten: a retry after it is a new request. */
  expiresAt: Date;
  retentionSeconds: number;
  leaseSeconds: number;
}

export interface KeyTimings {
  /** How long one attempt holds a key before another may take it over. */
  leaseSeconds: number;
  /** How long a key and its stored response live. */
  ttlSeconds: number;
}

export interface ClaimRequest {
  scope: string;
  key: string;
  operation: string;
  fingerprint: string;
  /** What the key keeps of the request, for a resume. */
  request: unknown;
  /** The operation's first recovery point. */
  firstPoint: string;
  /**
   * When given, the key starts out having reached `firstPoint` (a side
   * effect may happen from here), with this progress, and the claim commits
   * durably. Otherwise it only holds the key, and need not be durable: lost
   * in a crash, nothing had happened under it.
   */
  progress?: JsonObject;
}

/** Proof that this attempt holds the key: the lease owner is checked on every write. */
export interface Claim {
  keyId: string;
  leaseOwner: string;
  /** The recovery point the key is at. */
  point: string;
  /** What the phases so far kept with the key. */
  progress: JsonObject;
  /**
   * Whether the key ever reached a recovery point (by a move, or by a claim
   * that recorded progress): until it has, nothing but the claim was written.
   */
  moved: boolean;
  /** When the key reached its point, or its side-effect key changed, by the database's clock. */
  pointReachedAt: Date;
  /** Which of the request's side-effect keys is current: 0 until a service proved one can never succeed. */
  sideEffectGeneration: number;
  /** True when this attempt took the key over from one whose lease ran out. */
  tookOver: boolean;
  lifetime: KeyLifetime;
}

export type ClaimResult =
  | { kind: "claimed"; claim: Claim }
  | { kind: "replay"; stored: StoredResponse; lifetime: KeyLifetime }
  // Without a lifetime when the key vanished under every pass of the claim.
  | { kind: "in-flight"; lifetime?: KeyLifetime }
  | { kind: "fingerprint-mismatch"; lifetime: KeyLifetime };

/** An in-flight key whose lease ran out: its attempt crashed or stalled. */
export interface AbandonedKey {
  keyId: string;
  scope: string;
  key: string;
  operation: string;
  fingerprint: string;
  request: unknown;
}

/** Where a phase sends the key: on to a point with what it keeps, or complete with the response. */
export type KeyMove = PointMove | { response: StoredResponse };

/** A move on to a recovery point, with everything the phases kept so far. */
export interface PointMove {
  to: string;
  progress: JsonObject;
}

/** Another attempt took the key over (this one's lease ran out); this attempt's writes were rolled back. */
export class LeaseLostError extends Error {
  constructor(keyId: string) {
    super(`The lease on idempotency key ${keyId} was lost to another attempt`);
    this.name = "LeaseLostError";
  }
}
