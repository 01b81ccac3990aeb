import { randomUUID } from "node:crypto";
import { setTimeout as delay } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { CHECKOUT_OUTCOMES } from "@/lib/observability/checkout-outcomes";
import { baseUrl, cartBody, createAccount, postOrder } from "@/lib/testing/api-client";
import { sample, total } from "@/lib/observability/prometheus-text";

/** What an operator and a load balancer ask an instance: health, readiness, metrics, and the request id. */
async function scrape(): Promise<string> {
  const response = await fetch(`${baseUrl()}/api/metrics`);
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
  return response.text();
}

describe("health, readiness and metrics", () => {
  it("health answers 200 without asking anything, and refuses other methods", async () => {
    const health = await fetch(`${baseUrl()}/api/health`);
    expect(health.status).toBe(200);
    expect(health.headers.get("cache-control")).toBe("no-store");
    expect(await health.json()).toEqual({ status: "ok" });
    const post = await fetch(`${baseUrl()}/api/health`, { method: "POST" });
    expect(post.status).toBe(405);
    expect(post.headers.get("allow")).toContain("GET");
  });

  it("readiness answers 200 with the database's check alone: the payment provider is not asked", async () => {
    const ready = await fetch(`${baseUrl()}/api/ready`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({
      status: "ready",
      checkedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      checks: { database: { ok: true, ms: expect.any(Number) } },
    });
  });

  it("30 concurrent readiness checks share one probe: the instance counts at most two, and every answer is one of theirs", async () => {
    const probes = (text: string) => total(text, "oncepay_readiness_probes_total");
    // Past the last shared result's second, so these 30 need a probe of their own.
    await delay(1100);
    const before = await scrape();
    const answers = await Promise.all(
      Array.from({ length: 30 }, async () => {
        const response = await fetch(`${baseUrl()}/api/ready`);
        return { status: response.status, body: await response.text() };
      }),
    );
    const after = await scrape();

    for (const answer of answers) expect(answer.status).toBe(200);
    // One probe, or two when its result's second ran out among the 30.
    expect(probes(after) - probes(before)).toBeGreaterThanOrEqual(1);
    expect(probes(after) - probes(before)).toBeLessThanOrEqual(2);
    expect(new Set(answers.map((answer) => answer.body)).size).toBeLessThanOrEqual(2);
  });

  it("exposes every checkout outcome from the first scrape, and counts a checkout and its replay by outcome and duration", async () => {
    const before = await scrape();
    for (const outcome of CHECKOUT_OUTCOMES)
      expect(sample(before, "oncepay_checkout_outcomes_total", { outcome })).toBeGreaterThanOrEqual(
        0,
      );
    const account = await createAccount();
    const key = randomUUID();
    const body = cartBody();
    expect((await postOrder({ token: account.token, key, body })).response.status).toBe(201);
    expect(
      (await postOrder({ token: account.token, key, body })).response.headers.get(
        "idempotent-replayed",
      ),
    ).toBe("true");
    expect((await postOrder({ token: account.token, key: "" })).response.status).toBe(400);

    const after = await scrape();
    const delta = (outcome: string) =>
      sample(after, "oncepay_checkout_outcomes_total", { outcome })! -
      sample(before, "oncepay_checkout_outcomes_total", { outcome })!;
    expect(delta("created")).toBe(1);
    expect(delta("replayed")).toBe(1);
    expect(delta("invalid")).toBe(1);
    const durations = (text: string) =>
      sample(text, "oncepay_checkout_duration_seconds_count", { outcome: "created" })!;
    expect(durations(after) - durations(before)).toBe(1);
    expect(sample(after, "oncepay_idempotency_keys_in_flight")).toBeGreaterThanOrEqual(0);
    expect(after).toContain("# TYPE process_cpu_seconds_total counter");
  });
});

describe("X-Request-Id", () => {
  it("keeps a balancer's id and replaces anything that does not look like one", async () => {
    const given = `lb-${randomUUID()}`;
    expect(
      (
        await fetch(`${baseUrl()}/api/products`, { headers: { "X-Request-Id": given } })
      ).headers.get("x-request-id"),
    ).toBe(given);
    for (const forged of [
      "short",
      "x".repeat(200),
      "has spaces in it",
      "<script>alert(1)</script>",
    ]) {
      const answered = (
        await fetch(`${baseUrl()}/api/products`, { headers: { "X-Request-Id": forged } })
      ).headers.get("x-request-id");
      expect(answered).not.toBe(forged);
      expect(answered).toMatch(/^[0-9a-f-]{36}$/);
    }
  });
});
