import { randomUUID } from "node:crypto";
import { IDEMPOTENCY_KEY_HEADER } from "../lib/http/headers.ts";

/** What the cluster benchmarks send, as a shopper's client would, to the balancer. */
export interface Checkout {
  token: string;
  key: string;
  body: unknown;
}

/** A new API account; its bearer token. */
export async function createAccount(baseUrl: string): Promise<string> {
  const response = await fetch(`${baseUrl}/api/accounts`, { method: "POST" });
  if (response.status !== 201) throw new Error(`POST /api/accounts answered ${response.status}`);
  return ((await response.json()) as { token: string }).token;
}

/** A cart of its own (two lines), so that each checkout is a new request. */
export function newCart(): unknown {
  return {
    cartId: `cart-${randomUUID()}`,
    items: [
      { sku: "mug-ceramic-350", quantity: 2 },
      { sku: "beans-house-250", quantity: 1 },
    ],
  };
}

/** POST /api/orders, giving up after 20 s as a client would. */
export function postOrder(baseUrl: string, checkout: Checkout): Promise<Response> {
  return fetch(`${baseUrl}/api/orders`, {
    method: "POST",
    headers: {
      Authorization: `Bearer ${checkout.token}`,
      "Content-Type": "application/json",
      [IDEMPOTENCY_KEY_HEADER]: checkout.key,
    },
    body: JSON.stringify(checkout.body),
    signal: AbortSignal.timeout(20_000),
  });
}

/**
 * How the benchmarks start the app: the limiters run on every checkout,
 * keyed and keyless, as in production, with limits a client sending
 * thousands a minute never reaches; demo faults on, which the lab's
 * keyless route needs.
 */
export const BENCH_APP_ENV = {
  LOG_LEVEL: "warn",
  CHECKOUT_RATE_LIMIT: "100000000",
  LAB_RATE_LIMIT: "100000000",
  DEMO_FAULTS: "on",
};
