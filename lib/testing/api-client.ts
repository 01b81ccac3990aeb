import { randomUUID } from "node:crypto";
import { inject } from "vitest";

/** Small helpers for talking to the app under test over real HTTP. */
export function baseUrl(): string {
  return inject("baseUrl");
}

export interface ApiAccount {
  id: string;
  token: string;
}

/** A demo account with its bearer token, on the shared test app or on `base` (an app a test started itself). */
export async function createAccount(base: string = baseUrl()): Promise<ApiAccount> {
  const response = await fetch(`${base}/api/accounts`, { method: "POST" });
  if (response.status !== 201) throw new Error(`POST /api/accounts answered ${response.status}`);
  return (await response.json()) as ApiAccount;
}

export function cartBody(overrides: Record<string, unknown> = {}) {
  return {
    cartId: `cart-${randomUUID()}`,
    items: [
      { sku: "mug-ceramic-350", quantity: 2 },
      { sku: "beans-house-250", quantity: 1 },
    ],
    ...overrides,
  };
}

export interface PostOrderOptions {
  /** Another app than the shared test app. */
  baseUrl?: string;
  token?: string;
  key?: string | null;
  body?: unknown;
  rawBody?: string;
  headers?: Record<string, string>;
  /** Abandons the request when aborted (a timed-out test's). */
  signal?: AbortSignal;
}

/** POST /api/orders with a bearer token, an Idempotency-Key and a JSON body, each overridable. */
export async function postOrder(
  options: PostOrderOptions,
): Promise<{ response: Response; text: string }> {
  const headers: Record<string, string> = {
    "Content-Type": "application/json",
    ...options.headers,
  };
  if (options.token) headers.Authorization = `Bearer ${options.token}`;
  if (options.key !== null && options.key !== undefined) headers["Idempotency-Key"] = options.key;
  const response = await fetch(`${options.baseUrl ?? baseUrl()}/api/orders`, {
    method: "POST",
    headers,
    body: options.rawBody ?? JSON.stringify(options.body ?? cartBody()),
    signal: options.signal,
  });
  return { response, text: await response.text() };
}

/** GET /api/orders/:id with a bearer token, as an API client reads an order back. */
export async function getOrder(options: {
  baseUrl?: string;
  token?: string;
  id: string;
}): Promise<{ response: Response; text: string }> {
  const headers: Record<string, string> = {};
  if (options.token) headers.Authorization = `Bearer ${options.token}`;
  const response = await fetch(`${options.baseUrl ?? baseUrl()}/api/orders/${options.id}`, {
    headers,
  });
  return { response, text: await response.text() };
}

/** POST /api/orders/{orderId}/refunds with a bearer token, an Idempotency-Key and a JSON body (default: none, all that is left). */
export async function postRefund(options: {
  baseUrl?: string;
  token: string;
  orderId: string;
  key?: string | null;
  body?: unknown;
  headers?: Record<string, string>;
}): Promise<{ response: Response; text: string; json: () => unknown }> {
  const headers: Record<string, string> = {
    "Content-Type": "application/json",
    Authorization: `Bearer ${options.token}`,
    ...options.headers,
  };
  if (options.key !== null) headers["Idempotency-Key"] = options.key ?? randomUUID();
  const response = await fetch(
    `${options.baseUrl ?? baseUrl()}/api/orders/${options.orderId}/refunds`,
    { method: "POST", headers, body: JSON.stringify(options.body ?? {}) },
  );
  const text = await response.text();
  return { response, text, json: () => JSON.parse(text) };
}

/** A browser's session as the shop's first page hands it out: the Cookie header to send, and the token in it. */
export async function browserSession(
  base: string = baseUrl(),
): Promise<{ cookie: string; token: string }> {
  const cookie = (await fetch(`${base}/`)).headers.get("set-cookie")?.split(";")[0];
  if (!cookie?.startsWith("oncepay_session="))
    throw new Error("GET / handed out no session cookie");
  return { cookie, token: cookie.slice("oncepay_session=".length) };
}
