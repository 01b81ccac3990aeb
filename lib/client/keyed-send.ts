/**
 * One intent sent under its Idempotency-Key until an answer settles it: the
 * retry loop the checkout and the refund share. Every attempt sends the same
 * key and the same bytes, so however many reach the server, it acts once and
 * a late attempt gets the first one's stored answer back.
 *
 * The loop itself (counting attempts, the overall time budget, stopping on a
 * final answer) is p-retry's; retry-policy.ts decides what is retryable and
 * how long to wait. What an answer means (an order, a refund, a decline) is
 * the caller's: this module only says whether one arrived and which.
 * Framework-free: it runs under Vitest in Node.
 */
import pRetry from "p-retry";
import { toProblem } from "./api-types";
import { sendAttempt, type AttemptOutcome, type FetchLike } from "./attempt";
import {
  RETRY_POLICY,
  isRepairedRefusal,
  isRetryableStatus,
  nextRetryDelayMs,
  type RetryPolicy,
} from "./retry-policy";

export interface AttemptStart {
  /** 1-based, within this run. */
  n: number;
  maxAttempts: number;
}

export interface KeyedSendOptions {
  url: string;
  /** The intent's key, made before its first attempt. Null only for the lab's broken strategy. */
  idempotencyKey: string | null;
  /** Built once per intent, so every attempt sends the same bytes (and fingerprint). */
  body: string;
  /** Whether a 2xx body is the whole result; one that is not (cut off, garbled) is retried: the retry replays it. */
  isResult: (json: unknown) => boolean;
  fetch?: FetchLike;
  policy?: Partial<RetryPolicy>;
  /** Source of jitter in [0, 1); inject a constant for a deterministic schedule. */
  random?: () => number;
  onAttemptStart?: (start: AttemptStart) => void;
  /** After each attempt: what it got, and how long the loop waits before the next (null: it stops here). */
  onAttempt?: (attempt: AttemptStart, outcome: AttemptOutcome, retryInMs: number | null) => void;
}

/** An attempt that got an answer (any status). */
export type Answer = Extract<AttemptOutcome, { kind: "response" }>;

/**
 * How a run ended: an answer the same request cannot change (the result, a
 * refusal, a decline), or the loop gave up with the outcome unknown (no
 * answer, or only "try again" until the attempts or the budget ran out).
 */
export type KeyedSendResult =
  | { kind: "answered"; outcome: Answer; attempts: number }
  | { kind: "gave-up"; outcome: AttemptOutcome; attempts: number };

/** An attempt whose answer says "try again"; thrown so that p-retry runs another attempt. */
class RetryableAttempt extends Error {
  /** `attempt`: which attempt (1-based) this was, so a give-up reports how many were really made. */
  constructor(
    readonly outcome: AttemptOutcome,
    readonly attempt: number,
  ) {
    super("retryable attempt");
    this.name = "RetryableAttempt";
  }
}

/** Thrown from the failed-attempt hook when the policy says stop: no attempts left, or the budget would run out. */
class RetriesExhausted extends Error {
  constructor(
    readonly outcome: AttemptOutcome,
    readonly attempts: number,
  ) {
    super("retries exhausted");
    this.name = "RetriesExhausted";
  }
}

export async function sendUnderKey(options: KeyedSendOptions): Promise<KeyedSendResult> {
  const { url, idempotencyKey, body, isResult, random = Math.random } = options;
  const { onAttemptStart, onAttempt } = options;
  const policy: RetryPolicy = { ...RETRY_POLICY, ...options.policy };
  const maxAttempts = Math.max(1, policy.maxAttempts);
  // Called through a wrapper: a detached window.fetch throws "Illegal invocation".
  const fetch: FetchLike = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  const runStartedAt = performance.now();
  // The key's retention, from the last answer that told it.
  let keyRetentionSeconds: number | undefined;

  try {
    return await pRetry(
      async (n) => {
        onAttemptStart?.({ n, maxAttempts });
        const outcome = await sendAttempt({
          url,
          idempotencyKey,
          body,
          timeoutMs: policy.attemptTimeoutMs,
          waitForFirstSeconds: policy.waitForFirstSeconds,
          fetch,
        });
        if (outcome.kind === "no-response" || isRetryable(outcome, isResult))
          throw new RetryableAttempt(outcome, n);
        onAttempt?.({ n, maxAttempts }, outcome, null);
        return { kind: "answered" as const, outcome, attempts: n };
      },
      {
        retries: maxAttempts - 1,
        // p-retry's own backoff is switched off: the wait is full jitter or
        // Retry-After, which p-retry cannot express, and happens in the hook.
        minTimeout: 0,
        maxTimeout: 0,
        maxRetryTime: policy.budgetMs,
        onFailedAttempt: async ({ error, attemptNumber }) => {
          if (!(error instanceof RetryableAttempt)) throw error;
          const { outcome } = error;
          if (outcome.kind === "response")
            keyRetentionSeconds = outcome.keyRetentionSeconds ?? keyRetentionSeconds;
          const retryInMs = nextRetryDelayMs({
            attempt: attemptNumber,
            retryAfter: outcome.kind === "response" ? outcome.retryAfter : null,
            elapsedMs: performance.now() - runStartedAt,
            keyRetentionSeconds,
            policy: { ...policy, maxAttempts },
            random,
          });
          onAttempt?.({ n: attemptNumber, maxAttempts }, outcome, retryInMs);
          if (retryInMs === null) throw new RetriesExhausted(outcome, attemptNumber);
          await wait(retryInMs);
        },
      },
    );
  } catch (error) {
    if (error instanceof RetriesExhausted)
      return { kind: "gave-up", outcome: error.outcome, attempts: error.attempts };
    // p-retry's own time budget ran out after the wait, before the attempt we
    // meant to make (the wait overran: a throttled background tab, a suspended
    // device). The same give-up, after the attempts actually made.
    if (error instanceof RetryableAttempt)
      return { kind: "gave-up", outcome: error.outcome, attempts: error.attempt };
    throw error;
  }
}

function isRetryable(outcome: Answer, isResult: (json: unknown) => boolean): boolean {
  if (isRetryableStatus(outcome.status) || isRepairedRefusal(outcome.status, outcome.json))
    return true;
  // A success whose body did not arrive intact: the retry replays it, without acting again.
  return outcome.status >= 200 && outcome.status < 300 && !isResult(outcome.json);
}

/** Why a run gave up, in a sentence for the page: the last answer's detail, or that none came. */
export function gaveUpMessage(outcome: AttemptOutcome, attempts: number): string {
  const tries = attempts === 1 ? "1 attempt" : `${attempts} attempts`;
  if (outcome.kind === "no-response") {
    const why =
      outcome.reason === "timeout"
        ? "The server did not answer in time"
        : "Could not reach the server";
    return `${why} (${tries}).`;
  }
  return `${toProblem(outcome.json, outcome.status, outcome.statusText).detail} (${tries}).`;
}

function wait(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
