/**
 * Where an unfinished payment intent survives a reload: sessionStorage, one
 * entry per cart. The entry holds everything needed to send the very same
 * request again (cart, payment method, Idempotency-Key) plus the attempts so
 * far, and lives until the intent ends: paid, or a definite failure. A new
 * key is only ever made for a new intent, never for a reload of the old one.
 *
 * sessionStorage, not localStorage: it belongs to one tab, so two tabs never
 * resume (and race on) the same intent, and it is gone when the tab closes.
 */
import { isPaymentMethod, type CartLine, type PaymentMethod } from "./api-types";
import { parseAttemptLog, type AttemptLog } from "./attempt-log";
import { SERVER_KEY_LIFETIME_MS, worstCaseRunMs } from "./retry-policy";

export interface StoredIntent {
  cartId: string;
  idempotencyKey: string;
  items: CartLine[];
  paymentMethod: PaymentMethod;
  /** When the intent began (epoch ms): its key's age, which decides when the entry is forgotten. */
  createdAt: number;
  /**
   * When its latest run of attempts began (epoch ms), set by `startRun`: the
   * auto-resume window counts from here, so a run cut short now resumes even
   * if the intent itself is older. Entries saved without it read as createdAt.
   */
  lastRunAt: number;
  /**
   * "sending": a run was in progress when this was saved, so if the page is
   * loading now, a reload cut it short and the run should resume.
   * "unresolved": the client gave up with the outcome unknown; the next Pay
   * for the same cart resends this key.
   */
  state: "sending" | "unresolved";
  attempts: AttemptLog;
  /** How long the server keeps the key, once an answer said (Idempotency-Key-Policy). */
  keyRetentionSeconds?: number;
}

const PREFIX = "oncepay.intent.";

/**
 * A stored intent older than this is forgotten: half the server's key
 * lifetime, so a resent key is always one the server still remembers.
 */
export const INTENT_MAX_AGE_MS = SERVER_KEY_LIFETIME_MS / 2;

/**
 * How long an intent (a checkout's or a refund's) is kept: half its key's
 * life, as the server said it when it did (a server that keeps keys an hour
 * has its intents forgotten after half an hour), else half the default.
 */
export function intentMaxAgeMs(keyRetentionSeconds: number | undefined): number {
  return keyRetentionSeconds === undefined
    ? INTENT_MAX_AGE_MS
    : Math.min(INTENT_MAX_AGE_MS, (keyRetentionSeconds * 1000) / 2);
}

/** A retention as stored: a whole number of seconds, or absent. */
export function storedRetention(value: unknown): { keyRetentionSeconds?: number } {
  return Number.isSafeInteger(value) && (value as number) >= 0
    ? { keyRetentionSeconds: value as number }
    : {};
}

/**
 * A reload resumes an in-flight intent on its own only this soon after its
 * latest run began (longer than one run can take, so a run cut short by a
 * reload is always inside it): a tab restored hours later should not start
 * paying by itself. Older runs wait for the shopper to press Pay.
 */
export const AUTO_RESUME_WINDOW_MS = Math.max(10 * 60 * 1000, 2 * worstCaseRunMs());

export function samePayload(
  a: Pick<StoredIntent, "items" | "paymentMethod">,
  b: Pick<StoredIntent, "items" | "paymentMethod">,
): boolean {
  return a.paymentMethod === b.paymentMethod && JSON.stringify(a.items) === JSON.stringify(b.items);
}

/** The intent as saved when a run of attempts begins (a first Pay, a Pay again, or a resume after a reload). */
export function startRun(intent: StoredIntent, now: number = Date.now()): StoredIntent {
  return { ...intent, state: "sending", lastRunAt: now };
}

/** Whether a page that loads should resume the intent (a checkout's or a refund's) by itself. */
export function shouldAutoResume(
  intent: Pick<StoredIntent, "state" | "lastRunAt">,
  now: number = Date.now(),
): boolean {
  return intent.state === "sending" && now - intent.lastRunAt < AUTO_RESUME_WINDOW_MS;
}

export interface IntentStore {
  save(intent: StoredIntent): void;
  load(cartId: string): StoredIntent | null;
  /** The intent of this tab that ran most recently, if any (a reload does not know its cart id yet). */
  latest(): StoredIntent | null;
  remove(cartId: string): void;
}

/** Storage can be missing or throw (disabled, quota, private modes): then intents just do not survive a reload. */
export function createIntentStore(
  storage: Storage | null = browserSessionStorage(),
  now: () => number = Date.now,
): IntentStore {
  function read(storageKey: string): StoredIntent | null {
    if (!storage) return null;
    try {
      const raw = storage.getItem(storageKey);
      if (raw === null) return null;
      const intent = parseIntent(parseJson(raw));
      if (
        intent === null ||
        now() - intent.createdAt > intentMaxAgeMs(intent.keyRetentionSeconds)
      ) {
        storage.removeItem(storageKey);
        return null;
      }
      return intent;
    } catch {
      return null;
    }
  }

  return {
    save(intent) {
      try {
        storage?.setItem(PREFIX + intent.cartId, JSON.stringify(intent));
      } catch {
        // Full or disabled storage: the intent still runs, it only cannot survive a reload.
      }
    },
    load(cartId) {
      return read(PREFIX + cartId);
    },
    latest() {
      if (!storage) return null;
      let best: StoredIntent | null = null;
      try {
        const keys = Array.from({ length: storage.length }, (_, index) =>
          storage.key(index),
        ).filter((key): key is string => key !== null && key.startsWith(PREFIX));
        for (const key of keys) {
          const intent = read(key);
          if (intent && (!best || intent.lastRunAt > best.lastRunAt)) best = intent;
        }
      } catch {
        return null;
      }
      return best;
    },
    remove(cartId) {
      try {
        storage?.removeItem(PREFIX + cartId);
      } catch {
        // Nothing to clean up if storage is unusable.
      }
    },
  };
}

/** This tab's sessionStorage, or null where there is none (the server) or it may not be used. */
export function browserSessionStorage(): Storage | null {
  try {
    return typeof window === "undefined" ? null : window.sessionStorage;
  } catch {
    return null;
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}

function parseIntent(value: unknown): StoredIntent | null {
  if (typeof value !== "object" || value === null) return null;
  const v = value as Record<string, unknown>;
  const items =
    Array.isArray(v.items) && v.items.every(isCartLine) ? (v.items as CartLine[]) : null;
  if (
    typeof v.cartId !== "string" ||
    typeof v.idempotencyKey !== "string" ||
    items === null ||
    items.length === 0 ||
    !isPaymentMethod(v.paymentMethod) ||
    typeof v.createdAt !== "number" ||
    (v.state !== "sending" && v.state !== "unresolved")
  ) {
    return null;
  }
  return {
    cartId: v.cartId,
    idempotencyKey: v.idempotencyKey,
    items,
    paymentMethod: v.paymentMethod,
    createdAt: v.createdAt,
    // Entries saved before lastRunAt existed: their only run began with the intent.
    lastRunAt: typeof v.lastRunAt === "number" ? v.lastRunAt : v.createdAt,
    state: v.state,
    attempts: parseAttemptLog(v.attempts),
    ...storedRetention(v.keyRetentionSeconds),
  };
}

function isCartLine(value: unknown): value is CartLine {
  if (typeof value !== "object" || value === null) return false;
  const line = value as Record<string, unknown>;
  return (
    typeof line.sku === "string" && Number.isInteger(line.quantity) && (line.quantity as number) > 0
  );
}
