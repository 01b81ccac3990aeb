/**
 * When the checkout client tries again, and when it stops. Pure functions of
 * their inputs (the random source and the clock are parameters), so the whole
 * schedule can be checked with fake timers and a fixed `random`.
 *
 * The numbers are chosen so that an intent always settles far inside the
 * lifetime of its Idempotency-Key on the server (24 h by default): after that
 * the same key would be a new request, and a retry could charge twice.
 */

import { problemType } from "@/lib/http/problem-type";
import { REQUEST_PROBLEMS } from "@/lib/http/request-problems";

export interface RetryPolicy {
  /** Attempts per run of an intent, the first one included. */
  maxAttempts: number;
  /** One attempt is abandoned (and counts as a timeout) when no complete answer arrived by then. */
  attemptTimeoutMs: number;
  /** Backoff before retry r (1-based) is drawn from [0, min(cap, base * 2^(r-1))): full jitter. */
  backoffBaseMs: number;
  backoffCapMs: number;
  /** A Retry-After is a lower bound on the wait, but never makes the shopper wait longer than this for one retry. */
  retryAfterCapMs: number;
  /** No attempt starts later than this after the run's first attempt started. */
  budgetMs: number;
  /**
   * How long an attempt asks the server to wait for another attempt that
   * holds the key (Prefer: wait) before it answers 409: less than the
   * attempt's own timeout, so the answer always arrives inside it.
   */
  waitForFirstSeconds: number;
}

export const RETRY_POLICY: Readonly<RetryPolicy> = Object.freeze({
  maxAttempts: 12,
  attemptTimeoutMs: 6_000,
  backoffBaseMs: 500,
  backoffCapMs: 8_000,
  retryAfterCapMs: 15_000,
  budgetMs: 60_000,
  waitForFirstSeconds: 5,
});

/** The server's default key lifetime (IDEMPOTENCY_TTL_SECONDS), which the budget must stay far inside. */
export const SERVER_KEY_LIFETIME_MS = 24 * 60 * 60 * 1000;

/** The longest a run can take: the last attempt may start at the end of the budget and then time out. */
export function worstCaseRunMs(policy: RetryPolicy = RETRY_POLICY): number {
  return policy.budgetMs + policy.attemptTimeoutMs;
}

/**
 * Statuses where the same request may succeed later: 409 (the first attempt is
 * still running), 429 (rate limited) and 5xx (server trouble). Everything
 * else is final: 2xx is the result, 402 is a stored decline, and 400, 401, 413,
 * 415 and 422 need a different request, which a retry would not be.
 */
export function isRetryableStatus(status: number): boolean {
  return status === 409 || status === 429 || status >= 500;
}

const SEVERAL_SESSIONS = problemType(REQUEST_PROBLEMS["several-sessions"].slug);

/**
 * The one refusal that its own answer cures: the browser sent more than one
 * session cookie (a neighbour on the host tossed one in), and the 401
 * expired the extra ones, so the same request sent again carries the shop's
 * own alone. Nothing was claimed under the key: who is asking comes first.
 */
export function isRepairedRefusal(status: number, body: unknown): boolean {
  return (
    status === 401 &&
    typeof body === "object" &&
    body !== null &&
    (body as { type?: unknown }).type === SEVERAL_SESSIONS
  );
}

/** Retry-After as milliseconds: delay-seconds or an HTTP date; null when absent or unreadable. */
export function parseRetryAfterMs(value: string | null, now: number = Date.now()): number | null {
  if (value === null) return null;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  // An HTTP date always names its day and month; without the check, Date.parse reads "-3" as a year.
  if (!/[a-z]/i.test(trimmed)) return null;
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}

/** The retention in Idempotency-Key-Policy (`retention=86400, lease=30`), in seconds; null when absent or unreadable. */
export function parseKeyRetentionSeconds(value: string | null): number | null {
  const match = value?.match(/(?:^|,)\s*retention=(\d+)\s*(?:,|$)/);
  return match ? Number(match[1]) : null;
}

/**
 * The run's budget under a key the server keeps `keyRetentionSeconds`: the
 * last attempt must end within the first half of the key's life. The key
 * was claimed after the run's first attempt was sent, so time counted from
 * that send, on the client's own clock, never overstates what is left, and
 * no clock needs to agree with the server's. A retry after the key's end
 * would be a new request, and could charge twice.
 */
export function budgetUnderKeyMs(
  policy: RetryPolicy,
  keyRetentionSeconds: number | undefined,
): number {
  if (keyRetentionSeconds === undefined) return policy.budgetMs;
  return Math.min(policy.budgetMs, (keyRetentionSeconds * 1000) / 2 - policy.attemptTimeoutMs);
}

/** The upper bound of the backoff before retry `retry` (1 = the wait after the first attempt). */
export function backoffCeilingMs(retry: number, policy: RetryPolicy = RETRY_POLICY): number {
  return Math.min(policy.backoffCapMs, policy.backoffBaseMs * 2 ** (retry - 1));
}

/**
 * Full jitter (AWS Architecture Blog, "Exponential Backoff and Jitter"): a
 * uniform draw below the exponential ceiling, so clients that failed together
 * do not come back together.
 */
export function fullJitterDelayMs(
  retry: number,
  random: () => number = Math.random,
  policy: RetryPolicy = RETRY_POLICY,
): number {
  return Math.floor(random() * backoffCeilingMs(retry, policy));
}

export interface NextRetryInput {
  /** The attempt that just failed, 1-based. */
  attempt: number;
  /** The failed attempt's Retry-After header, if it had a response. */
  retryAfter: string | null;
  /** Time since the run's first attempt started. */
  elapsedMs: number;
  /** How long the server keeps the key, as its last answer said (Idempotency-Key-Policy). */
  keyRetentionSeconds?: number;
  policy?: RetryPolicy;
  random?: () => number;
  now?: number;
}

/**
 * How long to wait before the next attempt, or null to give up now: when the
 * attempts are used up, or when the next attempt would start outside the
 * budget, shortened to the key's first half-life when the server said how
 * long it keeps keys (waiting only to give up would waste the shopper's time).
 *
 * A valid Retry-After is the least wait (the server says it will not be ready
 * sooner), not the whole schedule: the backoff keeps growing underneath, so a
 * key held for a whole lease (30 s after a crash, answering 409 with
 * Retry-After: 1) is asked a dozen times, not thirty.
 */
export function nextRetryDelayMs({
  attempt,
  retryAfter,
  elapsedMs,
  keyRetentionSeconds,
  policy = RETRY_POLICY,
  random = Math.random,
  now,
}: NextRetryInput): number | null {
  if (attempt >= policy.maxAttempts) return null;
  const fromHeader = parseRetryAfterMs(retryAfter, now);
  const backoff = fullJitterDelayMs(attempt, random, policy);
  const delay =
    fromHeader === null ? backoff : Math.max(Math.min(fromHeader, policy.retryAfterCapMs), backoff);
  return elapsedMs + delay < budgetUnderKeyMs(policy, keyRetentionSeconds) ? delay : null;
}
