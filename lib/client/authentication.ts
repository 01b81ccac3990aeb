/**
 * 3-D Secure, in the browser: the checkout answered 202 with the bank's page,
 * so the tab leaves for it and comes back to the shop's page. What it must
 * remember across that round trip (the order to show) lives in
 * sessionStorage, which the tab keeps while it visits another site; what
 * the payment came to is then read from the order itself, until the
 * provider's event (or the recovery worker) has settled it.
 */
import { isOrder, type Order } from "./api-types";
import { parseAttemptLog, type AttemptLog } from "./attempt-log";

export interface Authentication {
  orderId: string;
  cartId: string;
  key: string | null;
  startedAt: number;
  /** The attempts that led to it, for the timeline the page shows on the way back. */
  attempts: AttemptLog;
}

const STORAGE_KEY = "oncepay:authenticating";

export interface AuthenticationStore {
  remember(authentication: Authentication): void;
  /** The authentication this tab left for, forgotten as it is read: it is shown once. */
  take(): Authentication | null;
}

export function createAuthenticationStore(storage: Storage | null): AuthenticationStore {
  return {
    remember(authentication) {
      try {
        storage?.setItem(STORAGE_KEY, JSON.stringify(authentication));
      } catch {
        // Unusable storage: the shopper comes back to a plain page, and the order list shows the order.
      }
    },
    take() {
      try {
        const raw = storage?.getItem(STORAGE_KEY) ?? null;
        storage?.removeItem(STORAGE_KEY);
        return raw === null ? null : parseAuthentication(JSON.parse(raw));
      } catch {
        return null;
      }
    },
  };
}

function parseAuthentication(value: unknown): Authentication | null {
  if (typeof value !== "object" || value === null) return null;
  const record = value as Record<string, unknown>;
  if (typeof record.orderId !== "string" || typeof record.cartId !== "string") return null;
  return {
    orderId: record.orderId,
    cartId: record.cartId,
    key: typeof record.key === "string" ? record.key : null,
    startedAt: typeof record.startedAt === "number" ? record.startedAt : 0,
    attempts: parseAttemptLog(record.attempts),
  };
}

/**
 * How long to wait before each look at the order: quickly at first (the
 * event usually lands within a second), then every few seconds, for as long
 * as the page stays open, since the recovery worker settles it in the end.
 */
export function nextLookInMs(looks: number): number {
  const schedule = [250, 500, 1000, 2000];
  return schedule[looks] ?? 4000;
}

/**
 * Reads the order until it is no longer pending. `onLook` hears of each look
 * that found it pending (the page says it is still waiting); `signal` stops it.
 */
export async function awaitSettledOrder(options: {
  orderId: string;
  fetch: (url: string, init: RequestInit) => Promise<Response>;
  onLook?: (looks: number) => void;
  signal?: AbortSignal;
  sleep?: (ms: number) => Promise<void>;
}): Promise<Order | null> {
  const sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
  for (let looks = 0; !options.signal?.aborted; looks++) {
    const order = await lookAtOrder(options.orderId, options.fetch);
    if (order && order.status !== "pending") return order;
    options.onLook?.(looks + 1);
    await sleep(nextLookInMs(looks));
  }
  return null;
}

async function lookAtOrder(
  orderId: string,
  fetch: (url: string, init: RequestInit) => Promise<Response>,
): Promise<Order | null> {
  try {
    const response = await fetch(`/api/orders/${encodeURIComponent(orderId)}`, {
      credentials: "same-origin",
      headers: { Accept: "application/json" },
    });
    if (!response.ok) return null;
    const json: unknown = await response.json();
    return isOrder(json) ? json : null;
  } catch {
    // Offline for a moment: the next look tries again.
    return null;
  }
}
