/**
 * The browser side of checkout: send one payment intent, retrying it safely.
 *
 * One Idempotency-Key per submit intent. The caller creates it (with
 * `newIdempotencyKey`) BEFORE the first attempt and passes it in; every retry
 * of that intent sends the same key and the same body, so however many
 * attempts reach the server, the shopper is charged at most once and a late
 * retry gets the first attempt's result back (`Idempotent-Replayed: true`).
 *
 * The retry loop itself (counting attempts, the overall time budget, stopping
 * on a final answer) is p-retry's; this module decides what counts as
 * retryable and how long to wait (retry-policy.ts), and reports every attempt
 * so the UI can show them. Framework-free: it runs under Vitest in Node.
 */
import pRetry from "p-retry";
import {
  isOrder,
  toProblem,
  type Cart,
  type Order,
  type PaymentMethod,
  type Problem,
} from "./api-types";
import { sendAttempt, type AttemptOutcome, type FetchLike } from "./attempt";
import {
  RETRY_POLICY,
  isRepairedRefusal,
  isRetryableStatus,
  nextRetryDelayMs,
  type RetryPolicy,
} from "./retry-policy";

export const ORDERS_URL = "/api/orders";

export interface AttemptStart {
  /** 1-based, within this run. */
  n: number;
  maxAttempts: number;
}

/** What one attempt did, for the attempts timeline. */
export interface AttemptInfo extends AttemptStart {
  /** The HTTP status, or null when no answer arrived. */
  status: number | null;
  /** Why no answer arrived; null when one did. */
  failure: "timeout" | "network" | null;
  requestId: string | null;
  replayed: boolean;
  durationMs: number;
  /** The order in a successful answer (the same one on every replay). */
  orderId: string | null;
  /** How long the client waits before attempt n + 1, or null if it stops here. */
  retryInMs: number | null;
}

export type CheckoutResult =
  | { kind: "paid"; order: Order; replayed: boolean; attempts: number; requestId: string | null }
  | {
      kind: "declined";
      problem: Problem;
      replayed: boolean;
      attempts: number;
      requestId: string | null;
    }
  | {
      kind: "failed";
      /**
       * True when the client gave up (timeouts, network errors, 409, 429, 5xx
       * until the budget ran out): the payment may or may not have happened,
       * so the intent and its key must be kept and reused. False when the
       * server refused the request itself (400, 401, 422, …): nothing was
       * charged and resending the same request cannot help.
       */
      outcomeUnknown: boolean;
      problem: Problem | null;
      message: string;
      status: number | null;
      attempts: number;
      requestId: string | null;
    };

export interface SubmitCheckoutOptions {
  cart: Cart;
  paymentMethod: PaymentMethod;
  /** The intent's Idempotency-Key, created before the first attempt. Null only for the lab's broken strategy. */
  idempotencyKey: string | null;
  url?: string;
  fetch?: FetchLike;
  policy?: Partial<RetryPolicy>;
  /** Source of jitter in [0, 1); inject a constant for a deterministic schedule. */
  random?: () => number;
  onAttemptStart?: (start: AttemptStart) => void;
  onAttempt?: (attempt: AttemptInfo) => void;
}

export function newIdempotencyKey(): string {
  return crypto.randomUUID();
}

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

export async function submitCheckout(options: SubmitCheckoutOptions): Promise<CheckoutResult> {
  const {
    cart,
    paymentMethod,
    idempotencyKey,
    url = ORDERS_URL,
    random = Math.random,
    onAttemptStart,
    onAttempt,
  } = options;
  const policy: RetryPolicy = { ...RETRY_POLICY, ...options.policy };
  const maxAttempts = Math.max(1, policy.maxAttempts);
  // Called through a wrapper: a detached window.fetch throws "Illegal invocation".
  const fetch: FetchLike = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  const body = JSON.stringify({ cartId: cart.cartId, items: cart.items, paymentMethod });
  const runStartedAt = performance.now();

  const describe = (n: number, outcome: AttemptOutcome, retryInMs: number | null): AttemptInfo =>
    outcome.kind === "response"
      ? {
          n,
          maxAttempts,
          status: outcome.status,
          failure: null,
          requestId: outcome.requestId,
          replayed: outcome.replayed,
          durationMs: outcome.durationMs,
          orderId: isOrder(outcome.json) ? outcome.json.id : null,
          retryInMs,
        }
      : {
          n,
          maxAttempts,
          status: null,
          failure: outcome.reason,
          requestId: null,
          replayed: false,
          durationMs: outcome.durationMs,
          orderId: null,
          retryInMs,
        };

  try {
    const { n, outcome } = await pRetry(
      async (n) => {
        onAttemptStart?.({ n, maxAttempts });
        const outcome = await sendAttempt({
          url,
          idempotencyKey,
          body,
          timeoutMs: policy.attemptTimeoutMs,
          fetch,
        });
        if (isRetryable(outcome)) throw new RetryableAttempt(outcome, n);
        onAttempt?.(describe(n, outcome, null));
        return { n, outcome };
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
          const retryInMs = nextRetryDelayMs({
            attempt: attemptNumber,
            retryAfter: outcome.kind === "response" ? outcome.retryAfter : null,
            elapsedMs: performance.now() - runStartedAt,
            policy: { ...policy, maxAttempts },
            random,
          });
          onAttempt?.(describe(attemptNumber, outcome, retryInMs));
          if (retryInMs === null) throw new RetriesExhausted(outcome, attemptNumber);
          await wait(retryInMs);
        },
      },
    );
    return finalResult(outcome, n);
  } catch (error) {
    if (error instanceof RetriesExhausted) return gaveUp(error.outcome, error.attempts);
    // p-retry's own time budget ran out after the wait, before the attempt we
    // meant to make (the wait overran: a throttled background tab, a suspended
    // device). The same give-up, after the attempts actually made.
    if (error instanceof RetryableAttempt) return gaveUp(error.outcome, error.attempt);
    throw error;
  }
}

function isRetryable(outcome: AttemptOutcome): boolean {
  if (outcome.kind === "no-response") return true;
  if (isRetryableStatus(outcome.status) || isRepairedRefusal(outcome.status, outcome.json))
    return true;
  // A success whose body did not arrive intact: the retry replays it, without charging again.
  return outcome.status >= 200 && outcome.status < 300 && !isOrder(outcome.json);
}

function finalResult(outcome: AttemptOutcome, attempts: number): CheckoutResult {
  if (outcome.kind !== "response") return gaveUp(outcome, attempts);
  const { status, statusText, json, replayed, requestId } = outcome;
  if (status >= 200 && status < 300 && isOrder(json))
    return { kind: "paid", order: json, replayed, attempts, requestId };
  const problem = toProblem(json, status, statusText);
  if (status === 402) return { kind: "declined", problem, replayed, attempts, requestId };
  return {
    kind: "failed",
    outcomeUnknown: false,
    problem,
    message: problem.detail,
    status,
    attempts,
    requestId,
  };
}

function gaveUp(outcome: AttemptOutcome, attempts: number): CheckoutResult {
  const tries = attempts === 1 ? "1 attempt" : `${attempts} attempts`;
  if (outcome.kind === "no-response") {
    const why =
      outcome.reason === "timeout"
        ? "The server did not answer in time"
        : "Could not reach the server";
    return {
      kind: "failed",
      outcomeUnknown: true,
      problem: null,
      message: `${why} (${tries}).`,
      status: null,
      attempts,
      requestId: null,
    };
  }
  const problem = toProblem(outcome.json, outcome.status, outcome.statusText);
  return {
    kind: "failed",
    outcomeUnknown: true,
    problem,
    message: `${problem.detail} (${tries}).`,
    status: outcome.status,
    attempts,
    requestId: outcome.requestId,
  };
}

function wait(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
