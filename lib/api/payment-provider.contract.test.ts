import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { paymentProviderKeyPrefix } from "@/lib/orders/provider-key";
import type { PaymentSimulator } from "@/lib/payments/simulator/server";
import { ledgerFor, setFaults, startTestSimulator } from "@/lib/testing/payment-simulator";
import { createAccount, postOrder } from "@/lib/testing/api-client";
import { startLabStorm } from "@/lib/testing/api-client-demo";
import { startAppServer, type AppServer } from "@/lib/testing/app-server";
import { expectNoInternalText, loggedLine } from "@/lib/testing/internal-text";
import { rowsAt } from "@/lib/testing/rows";
import { startOutageProxy, type OutageProxy } from "@/lib/testing/tcp-proxy";

/**
 * The contract rows about the payment provider, over real HTTP: the
 * provider does not answer (503, the key handed back for the retry), the
 * provider refuses the request itself (502, the key released), and the
 * provider fails with a 500 it stores and replays, as Stripe does
 * (reconciled by looking the charge up); and, while it does not answer,
 * everything that does not need it still serves (readiness, replays, the
 * orders), and what needs it says so without the provider's own words.
 * Each app talks to a simulator this test controls.
 */
let simulator: PaymentSimulator;
let providerLink: OutageProxy;
let app: AppServer;
let misconfiguredApp: AppServer;

beforeAll(async () => {
  simulator = await startTestSimulator();
  providerLink = await startOutageProxy(simulator.url);
  [app, misconfiguredApp] = await Promise.all([
    startAppServer({ env: { PAYMENT_SIMULATOR_URL: providerLink.url } }),
    // A test-mode key the provider does not know: every charge is refused (401).
    startAppServer({
      env: { PAYMENT_SIMULATOR_URL: simulator.url, STRIPE_SECRET_KEY: "sk_test_not-a-valid-key!" },
    }),
  ]);
});

afterAll(async () => {
  await Promise.all([app?.stop(), misconfiguredApp?.stop()]);
  await providerLink?.close();
  await simulator?.close();
});

const checkout = (server: AppServer, token: string, key: string) =>
  postOrder({
    baseUrl: server.baseUrl,
    token,
    key,
    body: { cartId: "provider-trouble", items: [{ sku: "filters-paper-100", quantity: 3 }] },
  });

const chargesOf = async (accountId: string) =>
  (await ledgerFor(simulator, { idempotencyKeyPrefix: paymentProviderKeyPrefix(accountId) }))
    .charges;

describe("the payment provider does not answer", () => {
  it("answers 503 dependency-unavailable with Retry-After: 1 and hands the key back; the retry charges once", async () => {
    const shopper = await createAccount(app.baseUrl);
    const key = randomUUID();

    await providerLink.cut();
    let unanswered: Awaited<ReturnType<typeof checkout>>;
    try {
      unanswered = await checkout(app, shopper.token, key);
    } finally {
      await providerLink.restore();
    }
    expect(unanswered.response.status).toBe(503);
    expect(unanswered.response.headers.get("content-type")).toBe("application/problem+json");
    expect(unanswered.response.headers.get("retry-after")).toBe("1");
    expect(JSON.parse(unanswered.text)).toMatchObject({
      status: 503,
      type: "/problems/dependency-unavailable",
    });
    const held = await rowsAt(app.databaseUrl).keyRow(shopper.id, key);
    expect(held).toMatchObject({ state: "in_flight", recovery_point: "payment_started" });
    expect(await chargesOf(shopper.id)).toHaveLength(0);

    // No waiting out a lease: the attempt ended its own, so the retry resumes at once.
    const retry = await checkout(app, shopper.token, key);
    expect(retry.response.status).toBe(201);
    expect(await rowsAt(app.databaseUrl).keyRow(shopper.id, key)).toMatchObject({
      id: held!.id,
      state: "complete",
    });
    expect(await rowsAt(app.databaseUrl).rowCounts(shopper.id)).toEqual({ orders: 1, payments: 1 });
    expect((await chargesOf(shopper.id)).map((charge) => charge.status)).toEqual(["succeeded"]);
  });
});

describe("the payment provider refuses the request itself", () => {
  it("answers 502 dependency-rejected, releases the key and charges nothing", async () => {
    const shopper = await createAccount(misconfiguredApp.baseUrl);
    const key = randomUUID();

    const refused = await checkout(misconfiguredApp, shopper.token, key);
    expect(refused.response.status).toBe(502);
    expect(refused.response.headers.get("content-type")).toBe("application/problem+json");
    expect(JSON.parse(refused.text)).toMatchObject({
      status: 502,
      type: "/problems/dependency-rejected",
    });
    expect(await rowsAt(misconfiguredApp.databaseUrl).keyRow(shopper.id, key)).toBeUndefined();
    expect(await rowsAt(misconfiguredApp.databaseUrl).rowCounts(shopper.id)).toEqual({
      orders: 0,
      payments: 0,
    });
    expect(await chargesOf(shopper.id)).toHaveLength(0);

    // Released, not held: the same key runs again (and is refused again) rather than answering 409.
    expect((await checkout(misconfiguredApp, shopper.token, key)).response.status).toBe(502);
  });
});

describe("the payment provider answers a 500 it stores under the key (Stripe's indeterminate outcome)", () => {
  it("when it had charged: the charge is looked up and the order written, in the same request", async () => {
    const shopper = await createAccount(app.baseUrl);
    const key = randomUUID();
    await setFaults(simulator, { failNext: "http_500_stored_after_charge" });

    const paid = await checkout(app, shopper.token, key);
    expect(paid.response.status).toBe(201);
    const charges = await chargesOf(shopper.id);
    expect(charges.map((charge) => charge.status)).toEqual(["succeeded"]);
    expect(JSON.parse(paid.text)).toMatchObject({ payment: { id: charges[0]!.payment_intent } });
    expect(await rowsAt(app.databaseUrl).rowCounts(shopper.id)).toEqual({ orders: 1, payments: 1 });
    expect(await rowsAt(app.databaseUrl).keyRow(shopper.id, key)).toMatchObject({
      state: "complete",
      response_status: 201,
    });
  });

  it("when it had not: once the 500 is replayed and the lookup finds nothing, the payment moves on to the request's next provider key and charges once", async () => {
    const shopper = await createAccount(app.baseUrl);
    const key = randomUUID();
    await setFaults(simulator, { failNext: "http_500_stored_before_charge" });

    const first = await checkout(app, shopper.token, key);
    expect(first.response.status).toBe(503);
    const held = await rowsAt(app.databaseUrl).keyRow(shopper.id, key);
    expect(held).toMatchObject({
      state: "in_flight",
      recovery_point: "payment_started",
      side_effect_generation: 0,
    });

    // The provider replays its stored 500 under the first provider key, which can never charge now.
    const paid = await checkout(app, shopper.token, key);
    expect(paid.response.status).toBe(201);
    const row = await rowsAt(app.databaseUrl).keyRow(shopper.id, key);
    expect(row).toMatchObject({ id: held!.id, state: "complete", side_effect_generation: 1 });
    const charges = await chargesOf(shopper.id);
    expect(charges.map((charge) => charge.status)).toEqual(["succeeded"]);
    expect((await ledgerFor(simulator, { idempotencyKey: row!.provider_key })).charges).toEqual([
      expect.objectContaining({ status: "succeeded" }),
    ]);
    expect(await rowsAt(app.databaseUrl).rowCounts(shopper.id)).toEqual({ orders: 1, payments: 1 });
  });

  it("a key row lost after the move starts again at the first provider key and ends on the same charge", async () => {
    const shopper = await createAccount(app.baseUrl);
    const key = randomUUID();
    await setFaults(simulator, { failNext: "http_500_stored_before_charge" });
    expect((await checkout(app, shopper.token, key)).response.status).toBe(503);
    const paid = await checkout(app, shopper.token, key);
    expect(paid.response.status).toBe(201);

    // As if a failover lost the order and its completed key: the client retries the same request.
    const db = rowsAt(app.databaseUrl);
    await db.loseKey(shopper.id, key);
    const again = await checkout(app, shopper.token, key);

    expect(again.response.status).toBe(201);
    expect(JSON.parse(again.text).payment.id).toBe(JSON.parse(paid.text).payment.id);
    expect((await chargesOf(shopper.id)).map((charge) => charge.status)).toEqual(["succeeded"]);
    expect(await db.rowCounts(shopper.id)).toEqual({ orders: 1, payments: 1 });
  });
});

describe("while the payment provider is unreachable, what does not need it still serves", () => {
  it("readiness stays 200, a completed key replays its 201, and the orders read back", async () => {
    const shopper = await createAccount(app.baseUrl);
    const key = randomUUID();
    const paid = await checkout(app, shopper.token, key);
    expect(paid.response.status).toBe(201);

    await providerLink.cut();
    try {
      expect((await fetch(`${app.baseUrl}/api/ready`)).status).toBe(200);
      const replay = await checkout(app, shopper.token, key);
      expect(replay.response.status).toBe(201);
      expect(replay.response.headers.get("idempotent-replayed")).toBe("true");
      expect(replay.text).toBe(paid.text);
      const orders = await fetch(`${app.baseUrl}/api/orders`, {
        headers: { Authorization: `Bearer ${shopper.token}` },
      });
      expect(orders.status).toBe(200);
      expect(((await orders.json()) as { data: unknown[] }).data).toHaveLength(1);
      // Cut a while: every probe since has been the database's alone.
      expect((await fetch(`${app.baseUrl}/api/ready`)).status).toBe(200);
    } finally {
      await providerLink.restore();
    }
  });

  it("the key inspector and a storm's report answer 200 without the counts, saying only that the provider could not be asked; the log has why", async () => {
    const shopper = await createAccount(app.baseUrl);
    const key = randomUUID();
    expect((await checkout(app, shopper.token, key)).response.status).toBe(201);
    const storm = await startLabStorm(shopper.token, app.baseUrl);

    await providerLink.cut();
    try {
      for (const path of [`/api/keys/${key}`, `/api/lab/storms/${storm.id}`]) {
        const response = await fetch(`${app.baseUrl}${path}`, {
          headers: { Authorization: `Bearer ${shopper.token}` },
        });
        expect(response.status, path).toBe(200);
        const text = await response.text();
        expect(JSON.parse(text)).toMatchObject({
          provider: { available: false, detail: expect.any(String) },
        });
        expectNoInternalText(
          JSON.stringify((JSON.parse(text) as { provider: unknown }).provider),
          new URL(providerLink.url).port,
        );
        const requestId = response.headers.get("x-request-id");
        const logged = await loggedLine(
          app,
          (line) => line.event === "provider.lookup_failed" && line.requestId === requestId,
        );
        expect(logged, `the log line of ${path}`).toBeDefined();
        expect(JSON.stringify(logged)).toContain(new URL(providerLink.url).port);
      }
    } finally {
      await providerLink.restore();
    }
  });

  it("a lab strategy that must charge answers 503 dependency-unavailable with Retry-After and the request id, and no provider text", async () => {
    const shopper = await createAccount(app.baseUrl);
    const storm = await startLabStorm(shopper.token, app.baseUrl);

    await providerLink.cut();
    let response: Response;
    let text: string;
    try {
      response = await fetch(`${app.baseUrl}${storm.request.path}`, {
        method: "POST",
        headers: { ...storm.request.headers, Authorization: `Bearer ${shopper.token}` },
        body: JSON.stringify(storm.request.body),
      });
      text = await response.text();
    } finally {
      await providerLink.restore();
    }
    expect(response.status).toBe(503);
    expect(response.headers.get("content-type")).toBe("application/problem+json");
    expect(Number(response.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(JSON.parse(text)).toMatchObject({ type: "/problems/dependency-unavailable" });
    expectNoInternalText(text, new URL(providerLink.url).port);
    const logged = await loggedLine(
      app,
      (line) =>
        line.event === "lab.payment_failed" &&
        line.requestId === response.headers.get("x-request-id"),
    );
    expect(JSON.stringify(logged)).toContain(new URL(providerLink.url).port);
    expect(await rowsAt(app.databaseUrl).rowCounts(shopper.id)).toEqual({ orders: 0, payments: 0 });
  });
});
