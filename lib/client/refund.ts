/**
 * The browser side of a refund: send one refund intent, retrying it safely,
 * as the checkout sends a payment (keyed-send.ts's loop, the same retry
 * policy). The caller makes the intent's Idempotency-Key before the first
 * attempt; every retry sends it with the same body, so however many attempts
 * reach the server, the order is refunded once.
 */
import type { RefundView } from "@/lib/refunds/refund-view";
import { toProblem, type Problem } from "./api-types";
import type { AttemptOutcome, FetchLike } from "./attempt";
import { gaveUpMessage, sendUnderKey, type Answer, type AttemptStart } from "./keyed-send";
import type { RetryPolicy } from "./retry-policy";

// The refund as the server shows it, by a type-only import: the browser reads what the API writes.
export type Refund = RefundView;

export function refundsUrl(orderId: string): string {
  return `/api/orders/${encodeURIComponent(orderId)}/refunds`;
}

export function isRefund(value: unknown): value is Refund {
  if (typeof value !== "object" || value === null) return false;
  const v = value as Record<string, unknown>;
  return (
    v.object === "refund" &&
    typeof v.id === "string" &&
    typeof v.amount === "number" &&
    typeof v.providerRefundId === "string"
  );
}

/** What one attempt got, for the status line between attempts. */
export interface RefundAttempt extends AttemptStart {
  status: number | null;
  failure: "timeout" | "network" | null;
  replayed: boolean;
  /** How long the client waits before attempt n + 1, or null if it stops here. */
  retryInMs: number | null;
  /** How long the server keeps the key, when the answer said. */
  keyRetentionSeconds?: number;
}

export type RefundResult =
  | { kind: "refunded"; refund: Refund; replayed: boolean; attempts: number }
  /**
   * The server answered for good without refunding (400, 404, 422, …): this
   * very request cannot succeed, so resending it is pointless. `problem`'s
   * detail is the server's own words, shown as they come.
   */
  | { kind: "refused"; problem: Problem; attempts: number }
  /**
   * The client gave up with the outcome unknown (no answer, or only "try
   * again" until the budget ran out): the refund may have been made, so the
   * intent and its key are kept, and the next press resends them.
   */
  | { kind: "failed"; outcomeUnknown: true; message: string; attempts: number };

export interface SubmitRefundOptions {
  orderId: string;
  /** Minor units; null for all that is left (the body then names no amount). */
  amount: number | null;
  /** The intent's Idempotency-Key, made before the first attempt. */
  idempotencyKey: string;
  fetch?: FetchLike;
  policy?: Partial<RetryPolicy>;
  random?: () => number;
  onAttemptStart?: (start: AttemptStart) => void;
  onAttempt?: (attempt: RefundAttempt) => void;
}

/** The body of a refund: the same bytes on every attempt, so the same fingerprint. */
export function refundBody(amount: number | null): string {
  return JSON.stringify(amount === null ? {} : { amount });
}

export async function submitRefund(options: SubmitRefundOptions): Promise<RefundResult> {
  const { orderId, amount, onAttempt, ...sending } = options;
  const sent = await sendUnderKey({
    ...sending,
    url: refundsUrl(orderId),
    body: refundBody(amount),
    isResult: isRefund,
    onAttempt: (start, outcome, retryInMs) => onAttempt?.(describe(start, outcome, retryInMs)),
  });
  if (sent.kind === "gave-up")
    return {
      kind: "failed",
      outcomeUnknown: true,
      message: gaveUpMessage(sent.outcome, sent.attempts),
      attempts: sent.attempts,
    };
  return answered(sent.outcome, sent.attempts);
}

function answered(outcome: Answer, attempts: number): RefundResult {
  const { status, statusText, json, replayed } = outcome;
  if (status >= 200 && status < 300 && isRefund(json))
    return { kind: "refunded", refund: json, replayed, attempts };
  return { kind: "refused", problem: toProblem(json, status, statusText), attempts };
}

function describe(start: AttemptStart, outcome: AttemptOutcome, retryInMs: number | null) {
  return {
    ...start,
    status: outcome.kind === "response" ? outcome.status : null,
    failure: outcome.kind === "response" ? null : outcome.reason,
    replayed: outcome.kind === "response" && outcome.replayed,
    retryInMs,
    ...(outcome.kind === "response" &&
      outcome.keyRetentionSeconds !== undefined && {
        keyRetentionSeconds: outcome.keyRetentionSeconds,
      }),
  };
}
