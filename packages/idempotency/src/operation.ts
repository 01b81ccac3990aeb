import { createHash } from "node:crypto";
import type { StoredResponse } from "./stored-response.js";

/**
 * An operation: what one idempotent request does, as a list of phases, each
 * named by the recovery point at which it runs (as in brandur's
 * rocket-rides-atomic). The engine runs them in order and keeps the key's
 * recovery point in step, so an attempt that dies anywhere is resumed at the
 * phase where it stopped, by a retry or by the recovery worker.
 *
 * - An atomic phase gets a transaction (`Tx`, the store's) for its own
 *   writes, which commit together with the key's move to the next recovery
 *   point, or with the key's completion and its stored response.
 * - A side effect (a call to a payment provider, a mail service) runs
 *   outside any transaction, with a key it must pass on, the same for every
 *   attempt, takeover and resume, so the service does it once; its result is
 *   kept with the key's move to the next point.
 *
 * A side effect runs only after a durable commit has recorded that it may
 * happen, so that a crash can never leave an effect the database does not
 * know about: the commit of an atomic phase before it, or, when the
 * operation starts with the side effect, the claim itself, which then
 * records `progressAtClaim` and commits durably.
 */
export interface Operation<Input, Tx> {
  /** Names the operation in its keys' rows, so the recovery worker knows who resumes them. */
  readonly name: string;
  /**
   * Reads the request's JSON body. A refusal is answered 400 and nothing is
   * stored. `stored` is what the key keeps of the request, parsed again when
   * another attempt resumes it (the body as sent when omitted): keep what
   * the operation reads, so a client cannot make the key hold its extras.
   */
  parse(json: unknown): ParseResult<Input>;
  readonly phases: readonly Phase<Input, Tx>[];
  /**
   * For an operation whose first phase is a side effect (and only then):
   * what its claim keeps with the key. The claim inserts the key at that
   * phase's point with this progress and commits durably, so one commit
   * records both the claim and that the side effect may happen.
   */
  progressAtClaim?(input: Input): JsonObject;
}

export type ParseResult<Input> =
  | { ok: true; input: Input; stored?: unknown }
  | { ok: false; detail: string; errors: FieldError[] };

export interface FieldError {
  path: string;
  message: string;
}

export type Phase<Input, Tx> = AtomicPhase<Input, Tx> | SideEffectPhase<Input>;

export interface AtomicPhase<Input, Tx> {
  readonly kind: "atomic";
  /** The recovery point at which it runs. */
  readonly point: string;
  /** Writes with `tx`, and says where the key goes: its writes commit with that move, or with neither. */
  run(context: PhaseContext<Input>, tx: Tx): Promise<Step>;
}

export interface SideEffectPhase<Input> {
  readonly kind: "side-effect";
  readonly point: string;
  /** Calls the service with `context.sideEffectKey`, and says where the key goes with the result. */
  run(context: SideEffectContext<Input>): Promise<Step>;
  /**
   * The key the service is given (default: sideEffectKeyOf). Derived from
   * the request, not from its row, so that it outlives the row.
   */
  sideEffectKey?(request: KeyedRequest, generation: number): string;
  /**
   * Whether a SideEffectRejected from this phase may release the key, so
   * that the same key starts afresh once the cause is fixed. Only true when
   * the phases before it write nothing: releasing undoes no write. The
   * engine still keeps the key when an earlier attempt may have called.
   */
  readonly rejectionReleasesKey?: boolean;
}

/** What a phase decides: the key moves on to a later phase, or completes with the response to store and send. */
export type Step = { to: string; progress?: JsonObject } | { response: StoredResponse };

export type JsonObject = { readonly [field: string]: unknown };

/** The request an attempt runs: the same for every attempt, takeover and resume of it. */
export interface KeyedRequest {
  /** Whose key it is (an account, a tenant): keys are unique within a scope. */
  scope: string;
  /** The client's Idempotency-Key. */
  key: string;
  /** Method, path and canonical body, hashed: what makes two requests the same one. */
  fingerprint: string;
  /** The key's row. */
  keyId: string;
}

export interface PhaseContext<Input> {
  request: KeyedRequest;
  input: Input;
  /** What the phases before this one kept with the key (each step's `progress`, merged). */
  progress: JsonObject;
  /** True when this attempt took the key over from one that stopped. */
  resumed: boolean;
}

export interface SideEffectContext<Input> extends PhaseContext<Input> {
  /** Pass it to the service as its idempotency key. */
  sideEffectKey: string;
  /** When the service was first asked under this key, by the database's clock (Stripe forgets a key after 24 hours). */
  askedSince: Date;
  /**
   * Moves on to the request's next side-effect key, durably: call it only
   * when the service proved the current key can never succeed (it replays a
   * failure it stored). `sideEffectKey` then names the new one.
   */
  nextSideEffectKey(): Promise<void>;
}

/** The recovery point of a completed key. */
export const FINISHED = "finished";

const MAX_NAME_LENGTH = 100;

/** Checks an operation's shape once, where it is defined, rather than in the middle of a request. */
export function defineOperation<Input, Tx>(operation: Operation<Input, Tx>): Operation<Input, Tx> {
  const { name, phases } = operation;
  if (name.length === 0 || name.length > MAX_NAME_LENGTH)
    throw new Error(`An operation's name has 1 to ${MAX_NAME_LENGTH} characters: "${name}"`);
  const [first] = phases;
  if (!first) throw new Error(`Operation ${name} has no phases`);
  if (first.kind === "side-effect" && !operation.progressAtClaim)
    throw new Error(
      `Operation ${name} starts with a side effect but has no progressAtClaim: its claim must record the side effect, durably, before it happens`,
    );
  if (first.kind === "atomic" && operation.progressAtClaim)
    throw new Error(
      `Operation ${name} starts with an atomic phase, whose commit records what the claim would: progressAtClaim is for an operation that starts with a side effect`,
    );
  const points = new Set<string>();
  for (const { point } of phases) {
    if (point.length === 0 || point.length > MAX_NAME_LENGTH)
      throw new Error(`Operation ${name}: a recovery point has 1 to ${MAX_NAME_LENGTH} characters`);
    if (point === FINISHED)
      throw new Error(`Operation ${name}: "${FINISHED}" is the completed key's point`);
    if (points.has(point)) throw new Error(`Operation ${name}: two phases run at ${point}`);
    points.add(point);
  }
  return operation;
}

/** The phase at a recovery point, and its place in the list. */
export function phaseAt<Input, Tx>(
  operation: Operation<Input, Tx>,
  point: string,
): { phase: Phase<Input, Tx>; index: number } {
  const index = operation.phases.findIndex((phase) => phase.point === point);
  const phase = operation.phases[index];
  if (!phase)
    throw new Error(`Operation ${operation.name} has no phase at recovery point ${point}`);
  return { phase, index };
}

/**
 * A side effect's default key: the scope, the client's key, the fingerprint
 * and the phase, hashed (so a key reused after it expired for another
 * request is a new side effect), and the generation after a dot.
 */
export function sideEffectKeyOf(request: KeyedRequest, point: string, generation: number): string {
  const digest = createHash("sha256")
    .update(request.scope)
    .update("\n")
    .update(request.key)
    .update("\n")
    .update(request.fingerprint)
    .update("\n")
    .update(point)
    .digest("base64url");
  return generation === 0 ? digest : `${digest}.${generation}`;
}
