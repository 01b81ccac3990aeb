import { setTimeout as delay } from "node:timers/promises";
import {
  IDEMPOTENCY_KEY_HEADER,
  IDEMPOTENT_REPLAYED_HEADER,
  RETRY_AFTER_HEADER,
} from "@/lib/http/headers";

/**
 * A client that does what the contract asks of one: send a checkout, and
 * on no final answer (a dropped connection, 409, 429, 5xx) send it again
 * with the same key and body, after Retry-After, until it gets one. It
 * records every attempt, so a test asserts on what the client saw.
 */
export interface AttemptRecord {
  /** null: no answer (the connection dropped or was refused). */
  status: number | null;
  retryAfter: string | null;
  replayed: boolean;
  contentType: string | null;
  /** The order a 201 names (its body's `id`); null for any other answer. */
  orderId: string | null;
  sentAt: number;
  answeredAt: number;
}

/** How long the client waits for one attempt's answer before it gives up on it (status null). */
export const ATTEMPT_TIMEOUT_MS = 20_000;

export interface CheckoutRun {
  key: string;
  attempts: AttemptRecord[];
  /** The last attempt, if it was a final answer. */
  final?: AttemptRecord;
}

export interface RetryingCheckoutOptions {
  baseUrl: string;
  token: string;
  key: string;
  body: unknown;
  /** Send no attempt after this long (the first is always sent). */
  deadlineMs: number;
  /** Send at most this many attempts; default: as many as the deadline allows. */
  maxAttempts?: number;
  /** How long to wait before the next attempt; default: Retry-After, or 500 ms without one. */
  waitBeforeRetry?(last: AttemptRecord, attempt: number): number;
}

export async function checkoutUntilAnswered(
  options: RetryingCheckoutOptions,
): Promise<CheckoutRun> {
  const run: CheckoutRun = { key: options.key, attempts: [] };
  const giveUpAt = Date.now() + options.deadlineMs;
  const maxAttempts = options.maxAttempts ?? Number.POSITIVE_INFINITY;
  for (;;) {
    const attempt = await sendOnce(options);
    run.attempts.push(attempt);
    if (isFinal(attempt.status)) {
      run.final = attempt;
      return run;
    }
    if (run.attempts.length >= maxAttempts) return run;
    const wait = options.waitBeforeRetry?.(attempt, run.attempts.length) ?? defaultWait(attempt);
    if (Date.now() + wait >= giveUpAt) return run;
    await delay(wait);
  }
}

async function sendOnce({
  baseUrl,
  token,
  key,
  body,
}: RetryingCheckoutOptions): Promise<AttemptRecord> {
  const sentAt = Date.now();
  try {
    const response = await fetch(`${baseUrl}/api/orders`, {
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        Authorization: `Bearer ${token}`,
        [IDEMPOTENCY_KEY_HEADER]: key,
      },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(ATTEMPT_TIMEOUT_MS),
    });
    const text = await response.text();
    return {
      status: response.status,
      retryAfter: response.headers.get(RETRY_AFTER_HEADER),
      replayed: response.headers.get(IDEMPOTENT_REPLAYED_HEADER) === "true",
      contentType: response.headers.get("content-type"),
      orderId: response.status === 201 ? orderIdIn(text) : null,
      sentAt,
      answeredAt: Date.now(),
    };
  } catch {
    return {
      status: null,
      retryAfter: null,
      replayed: false,
      contentType: null,
      orderId: null,
      sentAt,
      answeredAt: Date.now(),
    };
  }
}

function orderIdIn(text: string): string | null {
  try {
    const order = JSON.parse(text) as { id?: unknown };
    return typeof order.id === "string" ? order.id : null;
  } catch {
    return null;
  }
}

// Final: 2xx, 402 (declined), and any other 4xx but 409 and 429.
function isFinal(status: number | null): boolean {
  if (status === null || status === 409 || status === 429) return false;
  return status < 500;
}

function defaultWait(attempt: AttemptRecord): number {
  const seconds = Number(attempt.retryAfter);
  return Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : 500;
}
