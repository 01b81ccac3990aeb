import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { WebhookStormReport } from "@/lib/lab/webhook-storms";
import { baseUrl, createAccount, type ApiAccount } from "@/lib/testing/api-client";
import { closeTestDb } from "@/lib/testing/database";
import { sendOverlapping } from "@/lib/testing/raw-http";
import { loggedDeliveries } from "@/lib/testing/webhooks";

/**
 * The lab's webhook storm over real HTTP: one pending order of the lab's
 * own, its success event delivered `size` times provably in flight
 * together (sendOverlapping), then late copies of it mixed with an older
 * failure of the same payment. OncePay's handler must ship once and end
 * paid; the handler without an event record ships on every copy. The
 * report must agree with what each delivery was answered.
 */
afterAll(closeTestDb);

let account: ApiAccount;
beforeAll(async () => {
  account = await createAccount();
});

async function api(token: string, method: string, path: string, body?: unknown) {
  const response = await fetch(`${baseUrl()}${path}`, {
    method,
    headers: {
      Authorization: `Bearer ${token}`,
      ...(body !== undefined && { "Content-Type": "application/json" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, json: (await response.json()) as WebhookStormReport };
}

/** Starts a storm and sends it, wave after wave, each wave's deliveries all at once. */
async function webhookStorm(design: string, size: number) {
  const started = await api(account.token, "POST", "/api/lab/webhook-storms", { design, size });
  expect(started.status).toBe(201);
  const { request } = started.json;
  const waves: string[][] = [];
  for (const wave of request!.waves) {
    const raws = wave.flatMap((delivery) =>
      Array.from({ length: delivery.copies }, () => ({
        method: "POST",
        path: request!.endpoint,
        headers: { "Content-Type": "application/json", "Stripe-Signature": delivery.signature },
        body: delivery.body,
        type: delivery.type,
      })),
    );
    const { responses } = await sendOverlapping(baseUrl(), raws);
    waves.push(
      responses.map(
        (response, index) =>
          `${raws[index]!.type} ${response.status} ${String(JSON.parse(response.body).outcome)}`,
      ),
    );
  }
  const report = await api(account.token, "GET", `/api/lab/webhook-storms/${started.json.id}`);
  expect(report.status).toBe(200);
  return { started: started.json, waves, report: report.json };
}

const count = (answers: string[], answer: string) => answers.filter((a) => a === answer).length;

describe("a webhook storm", () => {
  it("at OncePay's handler: one delivery settles the order, every copy is a duplicate, the older failure is stale; one shipment, paid", async () => {
    const { started, waves, report } = await webhookStorm("event_record", 10);

    expect(started).toMatchObject({
      status: "pending",
      shipments: 0,
      deliveries: 10 + 3 + 3,
      outcome: null,
    });
    const [first, late] = waves as [string[], string[]];
    expect(first).toHaveLength(10);
    expect(count(first, "payment_intent.succeeded 200 paid")).toBe(1);
    expect(count(first, "payment_intent.succeeded 200 duplicate")).toBe(9);
    expect(count(late, "payment_intent.payment_failed 200 stale")).toBe(1);
    expect(count(late, "payment_intent.payment_failed 200 duplicate")).toBe(2);
    expect(count(late, "payment_intent.succeeded 200 duplicate")).toBe(3);
    expect(report).toMatchObject({ status: "paid", shipments: 1, outcome: "held", request: null });
    // The delivery log holds every one of the 16.
    expect(await loggedDeliveries(report.paymentIntent)).toHaveLength(16);
  });

  it("at the handler without an event record: every copy of the success ships again, and the report says it broke", async () => {
    const { waves, report } = await webhookStorm("no_event_record", 10);

    const all = waves.flat();
    expect(count(all, "payment_intent.succeeded 200 paid")).toBe(13);
    expect(count(all, "payment_intent.payment_failed 200 failed")).toBe(3);
    expect(report).toMatchObject({ shipments: 13, outcome: "broke" });
    // Which of the last wave's writes came last decides its status: either way, one order shipped 13 times.
    expect(["paid", "failed"]).toContain(report.status);
    expect(report.sentence).toContain("13 shipments");
  });

  it("lists each design's latest storm; another account's storm is not found; its orders are no purchases", async () => {
    const { started } = await webhookStorm("event_record", 10);

    const list = await api(account.token, "GET", "/api/lab/webhook-storms");
    const data = (list.json as unknown as { data: WebhookStormReport[] }).data;
    expect(data.find((storm) => storm.design === "event_record")?.id).toBe(started.id);
    const stranger = await createAccount();
    expect((await api(stranger.token, "GET", `/api/lab/webhook-storms/${started.id}`)).status).toBe(
      404,
    );
    const orders = await fetch(`${baseUrl()}/api/orders?limit=100`, {
      headers: { Authorization: `Bearer ${account.token}` },
    });
    const listed = ((await orders.json()) as { data: { id: string }[] }).data.map((o) => o.id);
    expect(listed).not.toContain(started.orderId);
  });

  it("answers a caller without credentials 401, and a body that is not JSON 400: never a 5xx", async () => {
    const anonymous = await Promise.all([
      fetch(`${baseUrl()}/api/lab/webhook-storms`),
      fetch(`${baseUrl()}/api/lab/webhook-storms`, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ design: "event_record", size: 10 }),
      }),
      fetch(`${baseUrl()}/api/lab/webhook-storms/7d0f1c4e-2b1a-4f5e-9c3d-8a6b5e4f3a21`),
    ]);
    expect(anonymous.map((response) => response.status)).toEqual([401, 401, 401]);
    const notJson = await fetch(`${baseUrl()}/api/lab/webhook-storms`, {
      method: "POST",
      headers: { Authorization: `Bearer ${account.token}`, "Content-Type": "application/json" },
      body: "{ design",
    });
    expect(notJson.status).toBe(400);
  });

  it("refuses a design or size it does not know (400), and a forged delivery changes nothing", async () => {
    expect(
      (await api(account.token, "POST", "/api/lab/webhook-storms", { design: "x", size: 10 }))
        .status,
    ).toBe(400);
    expect(
      (
        await api(account.token, "POST", "/api/lab/webhook-storms", {
          design: "event_record",
          size: 7,
        })
      ).status,
    ).toBe(400);
    const started = await api(account.token, "POST", "/api/lab/webhook-storms", {
      design: "no_event_record",
      size: 10,
    });
    const [delivery] = started.json.request!.waves[0]!;
    const direct = await fetch(`${baseUrl()}${started.json.request!.endpoint}`, {
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        "Stripe-Signature": `${delivery!.signature.split(",")[0]},v1=${"0".repeat(64)}`,
      },
      body: delivery!.body,
    });
    expect(direct.status).toBe(400);
    const report = await api(account.token, "GET", `/api/lab/webhook-storms/${started.json.id}`);
    expect(report.json).toMatchObject({ status: "pending", shipments: 0 });
  });
});
