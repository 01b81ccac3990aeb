import { fingerprintRequest } from "./fingerprint.js";
import { keyTopic, type KeyWaiters } from "./key-events.js";
import {
  FINISHED,
  phaseAt,
  sideEffectKeyOf,
  type KeyedRequest,
  type Operation,
  type Phase,
  type PhaseContext,
  type SideEffectPhase,
  type Step,
} from "./operation.js";
import { RETRY_AFTER_SECONDS, type Outcome, type Waited } from "./outcome.js";
import { silentReporter, type Reporter } from "./reporter.js";
import { SideEffectOutcomeUnknown, SideEffectRejected } from "./side-effect-errors.js";
import {
  LeaseLostError,
  type Claim,
  type ClaimRequest,
  type ClaimResult,
  type KeyMove,
  type KeyStore,
  type PointMove,
} from "./store.js";
import type { StoredResponse } from "./stored-response.js";

/**
 * The server algorithm, for any operation:
 *
 *   1. parse the body (nothing is written when it is refused),
 *   2. claim the key, or answer from its row (a replay, a 409, a 422); an
 *      operation that starts with a side effect records it with the claim,
 *   3. admit a request that claimed a new key (a rate limit, say), or
 *      release the claim,
 *   4. run the phases from the key's recovery point: each atomic phase's
 *      writes commit with the key's move, each side effect's result is kept
 *      with the next commit (the next atomic phase's, when one follows), and
 *      the last commit completes the key with the response,
 *   5. on failure, release the key while nothing but the claim was
 *      written; after that, keep it in flight at its recovery point until a
 *      retry or the recovery worker takes it over.
 */
export interface EngineOptions<Tx> {
  store: KeyStore<Tx>;
  /** Every operation whose keys this engine runs: the recovery worker finds each key's by its name. */
  operations: readonly Operation<unknown, Tx>[];
  /** Where the engine says what happened (a logger's methods); silent when omitted. */
  reporter?: Reporter;
  /** Lets a request whose key is in flight wait for its first attempt (`Prefer: wait`); without it, none waits. */
  waiting?: WaitingOptions;
}

export interface WaitingOptions {
  /** This instance's waiters: woken by its own changes, and by a listener's (listenForKeyChanges). */
  waiters: KeyWaiters;
  /** The longest a request waits, whatever it asks (10 s when omitted). */
  maxWaitMs?: number;
  /** Requests waiting at once on this instance; past it, a request is answered at once (1,000 when omitted). */
  maxWaiters?: number;
}

/** One request under a key, as the HTTP layer read it. */
export interface KeyedCall {
  /** Whose key it is: an account, a tenant. */
  scope: string;
  /** The client's Idempotency-Key. */
  key: string;
  method: string;
  path: string;
  /** The JSON body, as sent. */
  body: unknown;
}

export interface RunOptions<Refusal> {
  /**
   * Whether a request that claimed a new key may go on: undefined admits,
   * anything else refuses (and is returned), releasing the claim; so does a
   * throw, answered as the engine answers any failure. Asked once
   * per new key, right after its claim, so exactly the requests that claim
   * are counted; never for an answer the key's row gives, nor for a
   * takeover, which resumes a request admitted when it first claimed.
   */
  admit?: () => Promise<Refusal | undefined>;
  /**
   * Told the key's row once it is claimed or taken over, with the request as
   * the phases see it (to name both in a log's context, say).
   */
  onClaimed?: (claim: Claim, request: KeyedRequest) => void;
  /**
   * How long the client will wait (`Prefer: wait`) for another attempt that
   * holds the key: until it finishes (its answer, replayed), is released
   * (this request then runs it), or the wait ends (409). Bounded by the
   * engine's `waiting`; without it, nothing waits.
   */
  waitMs?: number;
}

export interface Engine<Tx> {
  readonly store: KeyStore<Tx>;
  run<Input, Refusal = never>(
    operation: Operation<Input, Tx>,
    call: KeyedCall,
    options?: RunOptions<Refusal>,
  ): Promise<Outcome | Refusal>;
  /** Resumes a key the recovery worker took over, from the request stored with it. */
  resume(claim: Claim, stored: StoredKey): Promise<Outcome>;
  readonly reporter: Reporter;
}

/** What a key keeps of its request, for a resume. */
export interface StoredKey {
  scope: string;
  key: string;
  operation: string;
  fingerprint: string;
  request: unknown;
}

export function createEngine<Tx>(options: EngineOptions<Tx>): Engine<Tx> {
  const { store } = options;
  const reporter = options.reporter ?? silentReporter;
  const operations = new Map<string, Operation<unknown, Tx>>();
  for (const operation of options.operations) {
    if (operations.has(operation.name))
      throw new Error(`Two operations are named ${operation.name}`);
    operations.set(operation.name, operation);
  }
  // By name: an app may build an operation per request (with its own
  // settings), as long as the one registered under that name can resume it.
  const registered = <Input>(operation: Operation<Input, Tx>) => {
    if (!operations.has(operation.name))
      throw new Error(
        `Operation ${operation.name} is not one of the engine's operations: the recovery worker could not resume its keys`,
      );
  };

  return {
    store,
    reporter,
    async run(operation, call, runOptions = {}) {
      registered(operation);
      const parsed = operation.parse(call.body);
      if (!parsed.ok) return { kind: "invalid-body", detail: parsed.detail, errors: parsed.errors };
      const fingerprint = fingerprintRequest(call.method, call.path, call.body);
      const claimRequest = {
        scope: call.scope,
        key: call.key,
        operation: operation.name,
        fingerprint,
        request: "stored" in parsed ? parsed.stored : call.body,
        firstPoint: operation.phases[0]!.point,
        progress: operation.progressAtClaim?.(parsed.input),
      };
      const runClaimed = async (claim: Claim) => {
        const request = { scope: call.scope, key: call.key, fingerprint, keyId: claim.keyId };
        runOptions.onClaimed?.(claim, request);
        const { admit } = runOptions;
        if (admit && !claim.tookOver) {
          const refusal = await admitOrRelease({ store, reporter }, claim, admit);
          if (refusal !== undefined) return refusal;
        }
        return attempt({ store, reporter }, operation, claim, request, parsed.input);
      };
      const topic = keyTopic(call.scope, call.key);
      const { claimed, waited } = await claimOrWait(
        () => claimAfresh(store, claimRequest),
        () => store.markAwaited(call.scope, call.key),
        waitingFor(options.waiting, runOptions.waitMs, topic),
      );
      switch (claimed.kind) {
        case "replay":
          return { ...claimed, ...(waited && { waited }) };
        case "fingerprint-mismatch":
          return claimed;
        case "in-flight":
          return {
            ...claimed,
            retryAfterSeconds: RETRY_AFTER_SECONDS.inFlight,
            ...(waited && { waited }),
          };
      }
      try {
        return await runClaimed(claimed.claim);
      } finally {
        // Whatever became of the key, this instance's waiters look again.
        options.waiting?.waiters.publish(topic);
      }
    },

    async resume(claim, stored) {
      const operation = operations.get(stored.operation);
      if (!operation) {
        reporter.error("idempotency.unknown_operation", {
          keyId: claim.keyId,
          operation: stored.operation,
        });
        return { kind: "internal-error" };
      }
      const request = {
        scope: stored.scope,
        key: stored.key,
        fingerprint: stored.fingerprint,
        keyId: claim.keyId,
      };
      const parsed = operation.parse(stored.request);
      if (!parsed.ok) {
        // Only a request that parsed is ever stored, so the rules changed
        // since. Before the key moved nothing happened and it can go; after,
        // an effect may exist that must not be orphaned, so it stays in
        // flight for someone to look at.
        if (claim.moved)
          reporter.error("idempotency.resume_request_invalid", {
            keyId: claim.keyId,
            point: claim.point,
            detail: parsed.detail,
          });
        else await releaseQuietly(store, reporter, claim);
        return { kind: "invalid-body", detail: parsed.detail, errors: parsed.errors };
      }
      try {
        return await attempt({ store, reporter }, operation, claim, request, parsed.input);
      } finally {
        options.waiting?.waiters.publish(keyTopic(stored.scope, stored.key));
      }
    },
  };
}

/**
 * The claim, except that a key taken over before it ever reached a recovery
 * point holds nothing but its claim, perhaps one an earlier version of the
 * operation made (at a first point since renamed, or since folded into the
 * claim): it is released and claimed afresh, as the new request it is.
 */
async function claimAfresh<Tx>(store: KeyStore<Tx>, request: ClaimRequest): Promise<ClaimResult> {
  const claimed = await store.claim(request);
  if (claimed.kind !== "claimed" || !claimed.claim.tookOver || claimed.claim.moved) return claimed;
  await store.release(claimed.claim);
  return store.claim(request);
}

/** How a request may wait for its key: where it hears of changes, and until when. */
interface Wait {
  waiters: KeyWaiters;
  topic: string;
  upToMs: number;
}

/**
 * Whether this request waits, and for how long: as long as it asked, up to
 * the engine's bound; never when the engine has no waiters, when they cannot
 * hear now (a lost listener), or when as many already wait as it allows.
 */
function waitingFor(
  waiting: WaitingOptions | undefined,
  askedMs: number | undefined,
  topic: string,
): Wait | undefined {
  if (!waiting || !askedMs || askedMs <= 0) return undefined;
  const { waiters, maxWaitMs = 10_000, maxWaiters = 1_000 } = waiting;
  if (!waiters.listening || waiters.subscribed >= maxWaiters) return undefined;
  return { waiters, topic, upToMs: Math.min(askedMs, maxWaitMs) };
}

/**
 * Claims the key; while another attempt holds it and the request may wait,
 * marks the key awaited (so its next change notifies every instance), waits
 * for that change (or the deadline) and claims again. Each subscription
 * opens before the claim that reads the row, so a change committed after
 * that read wakes it; a key no longer in flight when marked is claimed
 * again at once. `waited` says how long it waited, and for how long it
 * would have, when it did.
 */
async function claimOrWait(
  claim: () => Promise<ClaimResult>,
  markAwaited: () => Promise<boolean>,
  wait: Wait | undefined,
): Promise<{ claimed: ClaimResult; waited?: Waited }> {
  if (!wait) return { claimed: await claim() };
  const started = Date.now();
  const deadline = started + wait.upToMs;
  const waited = () => ({ forMs: Date.now() - started, upToMs: wait.upToMs });
  for (;;) {
    const subscription = wait.waiters.subscribe(wait.topic);
    try {
      const claimed = await claim();
      if (claimed.kind !== "in-flight" || Date.now() >= deadline)
        return { claimed, waited: waited() };
      if (!(await markAwaited())) continue;
      const heard = await untilDeadline(subscription.heard, deadline);
      if (heard !== "changed") return { claimed, waited: waited() };
    } finally {
      subscription.close();
    }
  }
}

function untilDeadline<T>(heard: Promise<T>, deadline: number): Promise<T | "deadline"> {
  let timer: NodeJS.Timeout | undefined;
  const deadlineReached = new Promise<"deadline">((resolve) => {
    timer = setTimeout(() => resolve("deadline"), Math.max(0, deadline - Date.now()));
  });
  return Promise.race([heard, deadlineReached]).finally(() => clearTimeout(timer));
}

/**
 * Asks to admit a request whose new key it has just claimed. Nothing has
 * happened under a claim this young, so a refusal releases it (the same key
 * works once the request is admitted), and so does a failure to decide,
 * answered as any failure is.
 */
async function admitOrRelease<Tx, Refusal>(
  parts: Parts<Tx>,
  claim: Claim,
  admit: () => Promise<Refusal | undefined>,
): Promise<Refusal | Outcome | undefined> {
  const { store, reporter } = parts;
  try {
    const refusal = await admit();
    if (refusal !== undefined) await releaseQuietly(store, reporter, claim);
    return refusal;
  } catch (error) {
    await releaseQuietly(store, reporter, claim);
    return failureOutcome(parts, error, claim);
  }
}

interface Parts<Tx> {
  store: KeyStore<Tx>;
  reporter: Reporter;
}

/**
 * How far an attempt has taken its key: the claim follows every commit; a
 * side effect's answer whose next phase is atomic waits here, unwritten, to
 * commit with that phase's writes (one commit, not two).
 */
interface AttemptPosition {
  claim: Claim;
  answered?: PointMove;
}

/** Runs the operation from the claim's recovery point to the end, or turns its failure into an outcome. */
async function attempt<Input, Tx>(
  parts: Parts<Tx>,
  operation: Operation<Input, Tx>,
  claim: Claim,
  request: KeyedRequest,
  input: Input,
): Promise<Outcome> {
  const { store, reporter } = parts;
  // The phase at which this attempt took the key over, or -1: every phase
  // after it, this attempt reached itself (all of them, for a new claim).
  // Also -1 for a point the operation no longer has, which fails below.
  const startedAt = claim.tookOver
    ? operation.phases.findIndex((phase) => phase.point === claim.point)
    : -1;
  const position: AttemptPosition = { claim };
  try {
    const stored = await runPhases(store, operation, position, request, input);
    return { kind: "completed", stored, lifetime: claim.lifetime };
  } catch (error) {
    if (releasable(operation, position, startedAt, error))
      await releaseQuietly(store, reporter, claim);
    else if (error instanceof SideEffectOutcomeUnknown || error instanceof SideEffectRejected)
      await endLeaseQuietly(store, reporter, claim);
    return failureOutcome(parts, error, claim);
  }
}

/**
 * Whether a failed attempt may delete its key, so that a retry starts
 * afresh: while the key never reached a recovery point and no side effect
 * answered, nothing but the claim was written; a side effect that this attempt asked and the
 * service refused outright released it too, if its phase says nothing
 * before it wrote anything.
 */
function releasable<Input, Tx>(
  operation: Operation<Input, Tx>,
  { claim, answered }: AttemptPosition,
  startedAt: number,
  error: unknown,
): boolean {
  if (answered) return false;
  if (!claim.moved) return true;
  if (!(error instanceof SideEffectRejected)) return false;
  const { phase, index } = phaseAt(operation, claim.point);
  // A rejection proves only that this attempt's call did nothing; an
  // earlier attempt that reached this phase may have called with success.
  return phase.kind === "side-effect" && phase.rejectionReleasesKey === true && startedAt < index;
}

async function runPhases<Input, Tx>(
  store: KeyStore<Tx>,
  operation: Operation<Input, Tx>,
  position: AttemptPosition,
  request: KeyedRequest,
  input: Input,
): Promise<StoredResponse> {
  const { claim } = position;
  const resumed = claim.tookOver;
  for (;;) {
    const at: PointMove = position.answered ?? { to: claim.point, progress: claim.progress };
    const { phase, index } = phaseAt(operation, at.to);
    const context: PhaseContext<Input> = { request, input, progress: at.progress, resumed };
    const moveOf = (step: Step) => keyMove(operation, index, at, step);
    if (phase.kind === "atomic") {
      const move = await store.commitPhase(
        claim,
        async (tx) => moveOf(await phase.run(context, tx)),
        position.answered?.to,
      );
      position.answered = undefined;
      if ("response" in move) return move.response;
      continue;
    }
    const move = moveOf(await runSideEffect(store, phase, claim, context));
    // Lost, a move on from a side effect only sends the key back to it, and
    // it asks again under the same key. So the move can wait for the next
    // atomic phase's commit, or, before another side effect, commit without
    // waiting for the disk. A completion is the answer, and must be durable.
    if (!("response" in move) && phaseAt(operation, move.to).phase.kind === "atomic") {
      position.answered = move;
      continue;
    }
    await store.move(claim, move, { durable: "response" in move });
    if ("response" in move) return move.response;
  }
}

function runSideEffect<Input, Tx>(
  store: KeyStore<Tx>,
  phase: SideEffectPhase<Input>,
  claim: Claim,
  context: PhaseContext<Input>,
): Promise<Step> {
  const keyAt = (generation: number) =>
    phase.sideEffectKey?.(context.request, generation) ??
    sideEffectKeyOf(context.request, phase.point, generation);
  const sideEffectContext = {
    ...context,
    sideEffectKey: keyAt(claim.sideEffectGeneration),
    askedSince: claim.pointReachedAt,
    async nextSideEffectKey() {
      await store.nextSideEffectKey(claim);
      sideEffectContext.sideEffectKey = keyAt(claim.sideEffectGeneration);
      sideEffectContext.askedSince = claim.pointReachedAt;
    },
  };
  return phase.run(sideEffectContext);
}

/** A phase's step as the store applies it: only forward, with everything kept so far. */
function keyMove<Input, Tx>(
  operation: Operation<Input, Tx>,
  from: number,
  at: PointMove,
  step: Step,
): KeyMove {
  if ("response" in step) {
    // A failure on our side is resumed or released, never answered from storage.
    if (step.response.status >= 500)
      throw new Error(
        `Operation ${operation.name}: a ${step.response.status} response is never stored`,
      );
    return { response: step.response };
  }
  const to = operation.phases.findIndex((phase: Phase<Input, Tx>) => phase.point === step.to);
  if (to <= from)
    throw new Error(
      `Operation ${operation.name}: the phase at ${at.to} moves to ${step.to}, which is not a later phase${step.to === FINISHED ? " (return a response to finish)" : ""}`,
    );
  return { to: step.to, progress: { ...at.progress, ...step.progress } };
}

// If ending the lease fails, the lease simply runs its course.
async function endLeaseQuietly<Tx>(store: KeyStore<Tx>, reporter: Reporter, claim: Claim) {
  try {
    await store.endLease(claim);
  } catch (error) {
    reporter.warn("idempotency.end_lease_failed", { keyId: claim.keyId, error });
  }
}

// If the release itself fails (the database just went away, say) the key is
// still safe: its lease runs out and the next retry takes it over.
async function releaseQuietly<Tx>(store: KeyStore<Tx>, reporter: Reporter, claim: Claim) {
  try {
    await store.release(claim);
  } catch (error) {
    reporter.warn("idempotency.release_failed", { keyId: claim.keyId, error });
  }
}

function failureOutcome<Tx>({ store, reporter }: Parts<Tx>, error: unknown, claim: Claim): Outcome {
  const fields = { keyId: claim.keyId, point: claim.point, error };
  if (error instanceof LeaseLostError) {
    reporter.warn("idempotency.lease_lost", fields);
    return { kind: "lease-lost", retryAfterSeconds: RETRY_AFTER_SECONDS.leaseLost };
  }
  if (error instanceof SideEffectRejected) {
    reporter.error("idempotency.side_effect_rejected", fields);
    return { kind: "dependency-rejected", detail: error.detail };
  }
  if (error instanceof SideEffectOutcomeUnknown) {
    reporter.warn("idempotency.side_effect_outcome_unknown", fields);
    return {
      kind: "dependency-unavailable",
      detail: error.detail,
      retryAfterSeconds: RETRY_AFTER_SECONDS.dependencyUnavailable,
    };
  }
  if (store.isUnavailable(error)) {
    reporter.error("idempotency.database_unavailable", fields);
    return {
      kind: "database-unavailable",
      retryAfterSeconds: RETRY_AFTER_SECONDS.databaseUnavailable,
    };
  }
  reporter.error("idempotency.operation_failed", fields);
  return { kind: "internal-error" };
}
