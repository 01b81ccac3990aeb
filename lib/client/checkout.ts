/**
 * The browser side of checkout: submit one payment intent and retry it safely.
 *
 * One Idempotency-Key per submit intent. The caller creates it (with
 * `newIdempotencyKey`) BEFORE the first attempt and passes it in; every retry
 * of that intent sends the same key, so however many attempts reach the
 * server, the shopper is charged at most once and a late retry gets the first
 * attempt's result back (`Idempotent-Replayed: true`).
 *
 * Framework-free: no React, no globals beyond `fetch`, `crypto` and timers,
 * and those that matter can be injected, so it runs under Vitest in Node.
 */

export type PaymentMethod = "pm_card_visa" | "pm_card_chargeDeclined";

export const PAYMENT_METHODS: readonly { id: PaymentMethod; label: string }[] = [
  { id: "pm_card_visa", label: "Test card: Visa (succeeds)" },
  { id: "pm_card_chargeDeclined", label: "Test card: declined" },
];

export interface CartLine {
  sku: string;
  quantity: number;
}

export interface Cart {
  cartId: string;
  items: CartLine[];
}

export interface OrderItem {
  sku: string;
  name: string;
  unitAmount: number;
  quantity: number;
  amount: number;
}

export interface Order {
  id: string;
  object: "order";
  status: "paid";
  cartId: string;
  currency: string;
  amount: number;
  items: OrderItem[];
  payment: { id: string; status: string; paymentMethod: string };
  createdAt: string;
}

/** RFC 9457 problem details, as the API returns them (402 adds `declineCode`). */
export interface Problem {
  type?: string;
  title: string;
  status: number;
  detail: string;
  declineCode?: string;
  [extension: string]: unknown;
}

export interface AttemptInfo {
  /** 1-based attempt number. */
  n: number;
  maxAttempts: number;
  status: number | "network error";
  /** The server's X-Request-Id for this attempt (per attempt, unlike the key). */
  requestId: string | null;
  replayed: boolean;
  /** How long the client will wait before attempt n + 1, or null if it stops here. */
  retryInMs: number | null;
}

export type CheckoutResult =
  | { kind: "paid"; order: Order; replayed: boolean; attempts: number; requestId: string | null }
  | { kind: "declined"; problem: Problem; replayed: boolean; attempts: number; requestId: string | null }
  | { kind: "failed"; problem: Problem | null; message: string; status: number | null; attempts: number; requestId: string | null };

export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

export interface SubmitCheckoutOptions {
  cart: Cart;
  paymentMethod: PaymentMethod;
  /** The intent's Idempotency-Key, created before the first attempt. */
  key: string;
  fetch?: FetchLike;
  onAttempt?: (attempt: AttemptInfo) => void;
  maxAttempts?: number;
  sleep?: (ms: number) => Promise<void>;
  /** Source of jitter in [0, 1); inject `() => 1` for deterministic waits. */
  random?: () => number;
  /** Per-attempt timeout; a timed-out attempt counts as a network error and is retried. */
  timeoutMs?: number;
  url?: string;
}

export const ORDERS_URL = "/api/orders";
const BACKOFF_BASE_MS = 250;
const BACKOFF_CAP_MS = 2_000;
/** A Retry-After is honoured, but never makes the shopper wait longer than this per retry. */
const RETRY_AFTER_CAP_MS = 15_000;
const DEFAULT_TIMEOUT_MS = 20_000;

export function newIdempotencyKey(): string {
  return crypto.randomUUID();
}

/** Statuses where the same request may succeed later: in flight, rate limited, server trouble. */
export function isRetryableStatus(status: number): boolean {
  return status === 409 || status === 429 || status >= 500;
}

/**
 * Milliseconds to wait before the next attempt. A valid Retry-After (delay in
 * seconds, or an HTTP date) wins; otherwise exponential backoff with full
 * jitter: random() * min(cap, base * 2^(n-1)) after attempt n.
 */
export function retryDelayMs(n: number, retryAfter: string | null, random: () => number = Math.random, now: number = Date.now()): number {
  const fromHeader = parseRetryAfter(retryAfter, now);
  if (fromHeader !== null) return Math.min(fromHeader, RETRY_AFTER_CAP_MS);
  const ceiling = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** (n - 1));
  return Math.round(random() * ceiling);
}

function parseRetryAfter(value: string | null, now: number): number | null {
  if (value === null) return null;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}

export async function submitCheckout(options: SubmitCheckoutOptions): Promise<CheckoutResult> {
  const {
    cart,
    paymentMethod,
    key,
    onAttempt,
    maxAttempts = 4,
    sleep = defaultSleep,
    random = Math.random,
    timeoutMs = DEFAULT_TIMEOUT_MS,
    url = ORDERS_URL,
  } = options;
  // Called through a wrapper: a detached window.fetch throws "Illegal invocation".
  const doFetch: FetchLike = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  // The body is built once, so every attempt sends the very same payload (and fingerprint).
  const body = JSON.stringify({ cartId: cart.cartId, items: cart.items, paymentMethod });

  for (let n = 1; ; n++) {
    const last = n >= Math.max(1, maxAttempts);
    let response: Response;
    try {
      response = await doFetch(url, {
        method: "POST",
        credentials: "same-origin",
        headers: { "Content-Type": "application/json", "Idempotency-Key": key },
        body,
        signal: timeoutSignal(timeoutMs),
      });
    } catch (error) {
      const retryInMs = last ? null : retryDelayMs(n, null, random);
      onAttempt?.({ n, maxAttempts, status: "network error", requestId: null, replayed: false, retryInMs });
      if (retryInMs === null) {
        return { kind: "failed", problem: null, message: networkMessage(error), status: null, attempts: n, requestId: null };
      }
      await sleep(retryInMs);
      continue;
    }

    const requestId = response.headers.get("X-Request-Id");
    const replayed = response.headers.get("Idempotent-Replayed") === "true";
    const json = await readJson(response);
    const retryable = isRetryableStatus(response.status) ||
      // A success whose body did not arrive intact: the retry replays it, without charging again.
      (response.ok && !isOrder(json));
    const retryInMs = retryable && !last ? retryDelayMs(n, response.headers.get("Retry-After"), random) : null;
    onAttempt?.({ n, maxAttempts, status: response.status, requestId, replayed, retryInMs });

    if (retryInMs !== null) {
      await sleep(retryInMs);
      continue;
    }
    if (response.ok && isOrder(json)) {
      return { kind: "paid", order: json, replayed, attempts: n, requestId };
    }
    const problem = toProblem(json, response);
    if (response.status === 402) {
      return { kind: "declined", problem, replayed, attempts: n, requestId };
    }
    return { kind: "failed", problem, message: problem.detail, status: response.status, attempts: n, requestId };
  }
}

function defaultSleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function timeoutSignal(ms: number): AbortSignal | undefined {
  return typeof AbortSignal !== "undefined" && typeof AbortSignal.timeout === "function" ? AbortSignal.timeout(ms) : undefined;
}

async function readJson(response: Response): Promise<unknown> {
  try {
    return await response.json();
  } catch {
    return null;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isOrder(value: unknown): value is Order {
  return isRecord(value) && typeof value.id === "string" && typeof value.amount === "number" && Array.isArray(value.items);
}

function toProblem(json: unknown, response: Response): Problem {
  if (isRecord(json) && typeof json.detail === "string") {
    return {
      ...json,
      title: typeof json.title === "string" ? json.title : response.statusText || `HTTP ${response.status}`,
      status: typeof json.status === "number" ? json.status : response.status,
      detail: json.detail,
    };
  }
  const title = response.statusText || `HTTP ${response.status}`;
  return { title, status: response.status, detail: `The server answered ${response.status}${response.statusText ? ` ${response.statusText}` : ""}.` };
}

function networkMessage(error: unknown): string {
  if (error instanceof Error && (error.name === "TimeoutError" || error.name === "AbortError")) {
    return "The server did not answer in time.";
  }
  return "Could not reach the server. Check your connection and try again.";
}
