import { assertNever } from "@/lib/assert-never";
import { isUniqueViolation } from "@/lib/db/errors";
import type { StoredResponse } from "@oncepay/idempotency";
import type { OrderRows } from "@/lib/orders/record";

/**
 * The persistence seam of the payment engine: the endpoint wrapper and the
 * recovery worker know only these operations. Two stores implement it, with
 * one contract suite (store-contract.test.ts): SqlIdempotencyStore, plain SQL
 * on a `pg` pool, and PrismaIdempotencyStore, the way a Prisma user writes it.
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
 * How far an in-flight payment got, as in brandur's rocket-rides-atomic:
 * claimed (nothing done yet), payment_started (the provider was asked to
 * charge; it may or may not have), charged (the provider answered, and its
 * answer is stored with the key), finished (the key is complete).
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
  /** From `payment_started` on: what the provider was asked to charge, so a resumed request repeats exactly that. */
  paymentRequest?: unknown;
  /** From `payment_started` on: when the payment started (the database's clock), or when its current provider key did. */
  paymentStartedAt?: Date;
  /** Which of the request's provider keys it charges under (paymentProviderKey): 0 unless the provider proved an earlier one can never charge. */
  providerKeyGeneration: number;
  /** At `charged`: the provider's answer, so a resumed request need not ask again. */
  chargeResult?: unknown;
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
  fingerprint: string;
  method: string;
  path: string;
  requestBody: unknown;
}

/** What completes a key: the response to store (and send), and the order's rows that commit with it or not at all. */
export interface KeyCompletion {
  response: StoredResponse;
  rows?: OrderRows;
}

export interface IdempotencyStore {
  /**
   * Claims the key, or says why not: a replay, a 409 (another attempt holds
   * it) or a 422 (another request under it), answered from its row. A key
   * past its TTL is started afresh; one whose holder's lease ran out is
   * taken over (`tookOver`), to be resumed where that attempt stopped.
   * Exactly one of any number of concurrent claims of one key wins.
   */
  claimKey(request: ClaimRequest): Promise<ClaimResult>;
  /** In-flight keys whose lease ran out, oldest first: the recovery worker's work list. */
  findAbandonedKeys(limit: number): Promise<AbandonedKey[]>;
  /** Takes over an in-flight key whose lease expired; undefined if someone else won or it finished. */
  takeOverKey(keyId: string): Promise<Claim | undefined>;
  /**
   * Moves the key to `payment_started` with what the provider will be asked
   * to charge, durably, and renews the lease, so the charge gets a whole
   * lease however long the attempt took to get here. Throws LeaseLostError
   * if the key is no longer ours.
   */
  markPaymentStarted(claim: Claim, paymentRequest: unknown): Promise<void>;
  /**
   * Moves a key at `payment_started` on to the request's next provider key,
   * durably, restarting its payment's clock and renewing the lease: the
   * provider proved the current key can never charge. Throws LeaseLostError
   * if the key is no longer ours.
   */
  startNextProviderKey(claim: Claim): Promise<void>;
  /** Moves the key to `charged` with the provider's answer; throws LeaseLostError if the key is no longer ours. */
  recordCharge(claim: Claim, chargeResult: unknown): Promise<void>;
  /**
   * Writes the order's rows and completes the key with its response, in one
   * commit. Having written nothing, throws LeaseLostError if the key is no
   * longer ours, and ChargeAlreadyRecordedError if the rows' payment is a
   * provider payment the database already records.
   */
  completeKey(claim: Claim, completion: KeyCompletion): Promise<void>;
  /**
   * Ends our lease now but keeps the key in flight at its recovery point:
   * this attempt has stopped, so the next retry (or the recovery worker) may
   * take the key over and resume it at once instead of waiting out the lease.
   */
  endLease(claim: Claim): Promise<void>;
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

/**
 * The provider answered with a payment the database already records under
 * another key row: one provider payment is recorded at most once (a unique
 * index on `payments (provider, provider_payment_id)`).
 */
export class ChargeAlreadyRecordedError extends Error {
  constructor(providerPaymentId: string, options?: { cause?: unknown }) {
    super(`Provider payment ${providerPaymentId} is already recorded`, options);
    this.name = "ChargeAlreadyRecordedError";
  }
}

const PAYMENT_RECORDED_ONCE_INDEX = "payments_provider_provider_payment_id_key";

/** What a store's completion throws: ChargeAlreadyRecordedError for the payment index's refusal, else the error itself. */
export function completionError(error: unknown, completion: KeyCompletion): unknown {
  const payment = completion.rows?.payment;
  if (payment && isUniqueViolation(error, PAYMENT_RECORDED_ONCE_INDEX))
    return new ChargeAlreadyRecordedError(payment.providerPaymentId, { cause: error });
  return error;
}

/**
 * Whether an attempt that left a key at this recovery point may have been
 * charged. It decides whether a failure may release the key: releasing one
 * that was charged would let a retry charge again under a new key row.
 */
export function mayHaveCharged(recoveryPoint: InFlightRecoveryPoint): boolean {
  switch (recoveryPoint) {
    case "claimed":
      return false;
    case "payment_started": // the provider was asked: it may or may not have charged
    case "charged": // it charged, and its answer is stored
      return true;
    default:
      return assertNever(recoveryPoint, "recovery point");
  }
}
