/**
 * The browser side of checkout: send one payment intent, retrying it safely.
 *
 * One Idempotency-Key per submit intent. The caller creates it (with
 * `newIdempotencyKey`) BEFORE the first attempt and passes it in; every retry
 * of that intent sends the same key and the same body, so however many
 * attempts reach the server, the shopper is charged at most once and a late
 * retry gets the first attempt's result back (`Idempotent-Replayed: true`).
 *
 * The retry loop is keyed-send.ts's, shared with the refund; this module
 * says what a checkout sends and what its answers mean (an order, a
 * decline, a refusal), and reports every attempt so the UI can show them.
 * Framework-free: it runs under Vitest in Node.
 */
import {
  isOrder,
  toProblem,
  type Cart,
  type Order,
  type PaymentMethod,
  type Problem,
} from "./api-types";
import type { AttemptOutcome, FetchLike } from "./attempt";
import { gaveUpMessage, sendUnderKey, type Answer, type AttemptStart } from "./keyed-send";
import type { RetryPolicy } from "./retry-policy";

export type { AttemptStart } from "./keyed-send";

export const ORDERS_URL = "/api/orders";

/** What one attempt did, for the attempts timeline. */
export interface AttemptInfo extends AttemptStart {
  /** The HTTP status, or null when no answer arrived. */
  status: number | null;
  /** Why no answer arrived; null when one did. */
  failure: "timeout" | "network" | null;
  requestId: string | null;
  replayed: boolean;
  /** The server waited for the first attempt that held the key before it answered (Prefer: wait). */
  waited: boolean;
  durationMs: number;
  /** The order in a successful answer (the same one on every replay). */
  orderId: string | null;
  /** How long the client waits before attempt n + 1, or null if it stops here. */
  retryInMs: number | null;
  /** How long the server keeps the key, when the answer said. */
  keyRetentionSeconds?: number;
}

export type CheckoutResult =
  | { kind: "paid"; order: Order; replayed: boolean; attempts: number; requestId: string | null }
  /** 202: the card's bank asks the shopper to authenticate at `url`; the order is pending until then. */
  | {
      kind: "authenticate";
      order: Order;
      url: string;
      replayed: boolean;
      attempts: number;
      requestId: string | null;
    }
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

export async function submitCheckout(options: SubmitCheckoutOptions): Promise<CheckoutResult> {
  const { cart, paymentMethod, url = ORDERS_URL, onAttempt, ...sending } = options;
  const sent = await sendUnderKey({
    ...sending,
    url,
    body: JSON.stringify({ cartId: cart.cartId, items: cart.items, paymentMethod }),
    isResult: isOrder,
    onAttempt: (start, outcome, retryInMs) => onAttempt?.(describe(start, outcome, retryInMs)),
  });
  return sent.kind === "answered"
    ? finalResult(sent.outcome, sent.attempts)
    : gaveUp(sent.outcome, sent.attempts);
}

function describe(
  { n, maxAttempts }: AttemptStart,
  outcome: AttemptOutcome,
  retryInMs: number | null,
): AttemptInfo {
  return outcome.kind === "response"
    ? {
        n,
        maxAttempts,
        status: outcome.status,
        failure: null,
        requestId: outcome.requestId,
        replayed: outcome.replayed,
        waited: outcome.waited,
        durationMs: outcome.durationMs,
        orderId: isOrder(outcome.json) ? outcome.json.id : null,
        retryInMs,
        ...(outcome.keyRetentionSeconds !== undefined && {
          keyRetentionSeconds: outcome.keyRetentionSeconds,
        }),
      }
    : {
        n,
        maxAttempts,
        status: null,
        failure: outcome.reason,
        requestId: null,
        replayed: false,
        waited: false,
        durationMs: outcome.durationMs,
        orderId: null,
        retryInMs,
      };
}

function finalResult(outcome: Answer, attempts: number): CheckoutResult {
  const { status, statusText, json, replayed, requestId } = outcome;
  if (status === 202 && isOrder(json) && json.nextAction)
    return {
      kind: "authenticate",
      order: json,
      url: json.nextAction.url,
      replayed,
      attempts,
      requestId,
    };
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
  const message = gaveUpMessage(outcome, attempts);
  if (outcome.kind === "no-response")
    return {
      kind: "failed",
      outcomeUnknown: true,
      problem: null,
      message,
      status: null,
      attempts,
      requestId: null,
    };
  return {
    kind: "failed",
    outcomeUnknown: true,
    problem: toProblem(outcome.json, outcome.status, outcome.statusText),
    message,
    status: outcome.status,
    attempts,
    requestId: outcome.requestId,
  };
}
