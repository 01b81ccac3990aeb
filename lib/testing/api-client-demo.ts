import { baseUrl } from "@/lib/testing/api-client";
import type { DemoSettings } from "@/lib/demo/settings";

/** Switches an account's demo faults through the public API, as the demo panel does. */
export async function setDemoSettings(token: string, settings: DemoSettings): Promise<Response> {
  return fetch(`${baseUrl()}/api/demo/settings`, {
    method: "PUT",
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
    body: JSON.stringify(settings),
  });
}
