import { baseUrl } from "@/lib/testing/api-client";
import type { DemoSettings } from "@/lib/demo/settings";

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
