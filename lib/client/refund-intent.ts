/**
 * A refund intent: one press of Refund for one order and one amount, and the
 * Idempotency-Key made for it at that press. The rules are the checkout's
 * (intent-decision.ts): the same key for every attempt while the outcome is
 * unknown, a new key once it is known; and, like a checkout's, the intent
 * is kept in this tab's sessionStorage until it ends, so a reload in the
 * middle neither loses the key nor makes a second refund out of the same
 * press.
 */
import { newIdempotencyKey } from "./checkout";
import { browserSessionStorage, intentMaxAgeMs, storedRetention } from "./intent-store";

export interface RefundIntent {
  orderId: string;
  idempotencyKey: string;
  /** Minor units; null for all that is left. */
  amount: number | null;
  /** When the intent began (epoch ms): its key's age, which decides when the entry is forgotten. */
  createdAt: number;
  /** When its latest run of attempts began (epoch ms). */
  lastRunAt: number;
  /**
   * "sending": a run was in progress when this was saved, so a page that
   * loads and finds it was reloaded in the middle of it. "unresolved": the
   * client gave up with the outcome unknown.
   */
  state: "sending" | "unresolved";
  /** How long the server keeps the key, once an answer said (Idempotency-Key-Policy). */
  keyRetentionSeconds?: number;
}

/**
 * The intent a press of Refund sends: the order's unfinished intent if this
 * is the very same request (same amount, or "all that is left" again), so
 * it is resent under its key; otherwise a new intent with a new key, made
 * here, before its first attempt.
 */
export function intentForRefund(
  unfinished: RefundIntent | null,
  request: { orderId: string; amount: number | null },
  now: number,
  newKey: () => string = newIdempotencyKey,
): RefundIntent {
  if (unfinished && unfinished.orderId === request.orderId && unfinished.amount === request.amount)
    return { ...unfinished, state: "sending", lastRunAt: now };
  return {
    orderId: request.orderId,
    idempotencyKey: newKey(),
    amount: request.amount,
    createdAt: now,
    lastRunAt: now,
    state: "sending",
  };
}

export interface RefundIntentStore {
  save(intent: RefundIntent): void;
  load(orderId: string): RefundIntent | null;
  remove(orderId: string): void;
}

const PREFIX = "oncepay.refund.";

/** Storage can be missing or throw (disabled, quota, private modes): then intents just do not survive a reload. */
export function createRefundIntentStore(
  storage: Storage | null = browserSessionStorage(),
  now: () => number = Date.now,
): RefundIntentStore {
  return {
    save(intent) {
      try {
        storage?.setItem(PREFIX + intent.orderId, JSON.stringify(intent));
      } catch {
        // Full or disabled storage: the refund still runs, it only cannot survive a reload.
      }
    },
    load(orderId) {
      try {
        const raw = storage?.getItem(PREFIX + orderId);
        if (raw === null || raw === undefined) return null;
        const intent = parseIntent(JSON.parse(raw));
        // Older than half the server's key lifetime: the server may forget the key before a resend reaches it.
        if (
          intent === null ||
          intent.orderId !== orderId ||
          now() - intent.createdAt > intentMaxAgeMs(intent.keyRetentionSeconds)
        ) {
          storage?.removeItem(PREFIX + orderId);
          return null;
        }
        return intent;
      } catch {
        return null;
      }
    },
    remove(orderId) {
      try {
        storage?.removeItem(PREFIX + orderId);
      } catch {
        // Nothing to clean up if storage is unusable.
      }
    },
  };
}

function parseIntent(value: unknown): RefundIntent | null {
  if (typeof value !== "object" || value === null) return null;
  const v = value as Record<string, unknown>;
  const amount = v.amount === null || (Number.isInteger(v.amount) && (v.amount as number) > 0);
  if (
    typeof v.orderId !== "string" ||
    typeof v.idempotencyKey !== "string" ||
    !amount ||
    typeof v.createdAt !== "number" ||
    typeof v.lastRunAt !== "number" ||
    (v.state !== "sending" && v.state !== "unresolved")
  )
    return null;
  return {
    orderId: v.orderId,
    idempotencyKey: v.idempotencyKey,
    amount: v.amount as number | null,
    createdAt: v.createdAt,
    lastRunAt: v.lastRunAt,
    state: v.state,
    ...storedRetention(v.keyRetentionSeconds),
  };
}
