/**
 * The lab's webhook storm, browser side and framework-free: ask the server
 * for a storm (it makes the pending order and signs the events, as the
 * provider would), send each wave's deliveries all at once, the next wave
 * once the last is answered, and tally what each delivery was answered.
 * What the storm did (shipments, the order's status) is the server's
 * report, never counted here.
 */
import type { LabWebhookDesign } from "@/lib/lab/webhook-designs";
import type { SignedDelivery, WebhookStormReport } from "@/lib/lab/webhook-storms";
import { toProblem } from "@/lib/client/api-types";
import type { FetchLike } from "@/lib/client/attempt";
import { StormError, type StatusCount } from "@/lib/client/lab-storm";

export type { WebhookStormReport };

export interface WebhookStormRun {
  report: WebhookStormReport;
  /** Each distinct answer ("200 paid", "200 duplicate", "200 stale") and how many got it, most common first. */
  answers: StatusCount[];
}

export async function runWebhookStorm(
  fetch: FetchLike,
  design: LabWebhookDesign,
  size: number,
  onWave?: (wave: number, waves: number) => void,
): Promise<WebhookStormRun> {
  const started = await call(fetch, "/api/lab/webhook-storms", 201, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ design, size }),
  });
  const { request } = started;
  if (!request) throw new StormError("The server sent no deliveries for the storm.");
  const answers = new Map<string, number>();
  for (const [index, wave] of request.waves.entries()) {
    onWave?.(index + 1, request.waves.length);
    // Every fetch started in one synchronous loop before any answer is awaited.
    const sends = wave.flatMap((delivery) =>
      Array.from({ length: delivery.copies }, () => deliver(fetch, request.endpoint, delivery)),
    );
    for (const label of await Promise.all(sends)) answers.set(label, (answers.get(label) ?? 0) + 1);
  }
  const report = await call(
    fetch,
    `/api/lab/webhook-storms/${encodeURIComponent(started.id)}`,
    200,
    {
      method: "GET",
    },
  );
  return {
    report,
    answers: [...answers]
      .map(([label, count]) => ({ label, count }))
      .sort((a, b) => b.count - a.count || a.label.localeCompare(b.label)),
  };
}

/** Each design's latest storm. */
export async function latestWebhookStorms(fetch: FetchLike): Promise<WebhookStormReport[]> {
  const response = await fetch("/api/lab/webhook-storms", {
    method: "GET",
    credentials: "same-origin",
  });
  const json: unknown = await response.json().catch(() => null);
  if (response.status !== 200)
    throw new StormError(toProblem(json, response.status, response.statusText).detail);
  return (json as { data: WebhookStormReport[] }).data;
}

async function deliver(
  fetch: FetchLike,
  endpoint: string,
  delivery: SignedDelivery,
): Promise<string> {
  try {
    const response = await fetch(endpoint, {
      method: "POST",
      credentials: "omit",
      headers: { "Content-Type": "application/json", "Stripe-Signature": delivery.signature },
      body: delivery.body,
    });
    const json = (await response.json().catch(() => null)) as { outcome?: unknown } | null;
    return typeof json?.outcome === "string"
      ? `${response.status} ${json.outcome}`
      : String(response.status);
  } catch {
    return "network error";
  }
}

async function call(
  fetch: FetchLike,
  path: string,
  expected: number,
  init: RequestInit,
): Promise<WebhookStormReport> {
  const response = await fetch(path, { ...init, credentials: "same-origin" });
  const json: unknown = await response.json().catch(() => null);
  if (response.status !== expected)
    throw new StormError(toProblem(json, response.status, response.statusText).detail);
  return json as WebhookStormReport;
}
