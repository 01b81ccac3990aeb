import { baseUrl } from "@/lib/testing/api-client";
import type { DemoSettings } from "@/lib/demo/settings";
import type { StormReport } from "@/lib/lab/storms";

/**
 * How long a test holds a checkout (the demo's network delay, after the
 * claim) while its other requests are sent and must find the key held. They
 * arrive in milliseconds on an idle machine and in seconds on a busy one:
 * the hold is long enough for the busy one, and the test pays it in wall
 * time only once.
 */
export const HOLD_WHILE_OTHERS_ARRIVE_MS = 5_000;

/** Switches an account's demo faults through the public API, as the demo panel does. */
export async function setDemoSettings(
  token: string,
  settings: DemoSettings,
  base: string = baseUrl(),
): Promise<Response> {
  return fetch(`${base}/api/demo/settings`, {
    method: "PUT",
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
    body: JSON.stringify(settings),
  });
}

/** POST /api/lab/unsafe-orders: the lab's keyless checkout, as the "No key (broken)" demo sends it. */
export async function postUnsafeOrder(options: {
  token?: string;
  body: unknown;
  baseUrl?: string;
}): Promise<Response> {
  const headers: Record<string, string> = { "Content-Type": "application/json" };
  if (options.token) headers.Authorization = `Bearer ${options.token}`;
  return fetch(`${options.baseUrl ?? baseUrl()}/api/lab/unsafe-orders`, {
    method: "POST",
    headers,
    body: JSON.stringify(options.body),
  });
}

/** POST /api/lab/storms: a storm of two of the lab's keyless strategy, as the lab page starts one. */
export async function startLabStorm(token: string, base: string = baseUrl()): Promise<StormReport> {
  const response = await fetch(`${base}/api/lab/storms`, {
    method: "POST",
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
    body: JSON.stringify({ strategy: "no_key", size: 2 }),
  });
  if (response.status !== 201)
    throw new Error(`POST /api/lab/storms answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as StormReport;
}
