import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { LAB_STORM_METADATA } from "@/lib/lab/charge-tags";
import type { StormReport } from "@/lib/lab/storms";
import type { LabStrategy } from "@/lib/lab/strategies";
import { baseUrl, createAccount, type ApiAccount } from "@/lib/testing/api-client";
import { closeTestDb, ordersForCart, providerIntents } from "@/lib/testing/database";
import { sendOverlapping, type RawResponse } from "@/lib/testing/raw-http";
import { itOnServer } from "@/lib/testing/postgres-server-only";

/**
 * The strategy lab over real HTTP: a storm is N identical requests provably
 * in flight together (the seed test's sendOverlapping, not the browser's six
 * connections), and its report must agree with our tables and with the
 * payment simulator's ledger. On PostgreSQL the broken strategies must
 * really lose; the real one must not.
 */
afterAll(closeTestDb);

let shopper: ApiAccount;
beforeAll(async () => {
  shopper = await createAccount();
});

async function api(
  token: string | undefined,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; json: Record<string, unknown> & StormReport }> {
  const headers: Record<string, string> = {};
  if (token) headers.Authorization = `Bearer ${token}`;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const response = await fetch(`${baseUrl()}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, json: await response.json() };
}

/** Starts a storm, fires it (all N in flight together), and reads its report. */
async function storm(
  account: ApiAccount,
  strategy: LabStrategy,
  size: number,
): Promise<{ report: StormReport; responses: RawResponse[] }> {
  const started = await api(account.token, "POST", "/api/lab/storms", { strategy, size });
  expect(started.status).toBe(201);
  const { request } = started.json;
  const raw = {
    method: request.method,
    path: request.path,
    headers: { ...request.headers, Authorization: `Bearer ${account.token}` },
    body: JSON.stringify(request.body),
  };
  const { responses, lastSentAt } = await sendOverlapping(
    baseUrl(),
    Array.from({ length: size }, () => raw),
  );
  expect(Math.min(...responses.map((response) => response.receivedAt))).toBeGreaterThanOrEqual(
    lastSentAt,
  );
  const report = await api(account.token, "GET", `/api/lab/storms/${started.json.id}`);
  expect(report.status).toBe(200);
  return { report: report.json, responses };
}

/** What the storm left in our tables and in the simulator's ledger, counted there. */
async function recorded(report: StormReport, charges: Parameters<typeof providerIntents>[0]) {
  return {
    orders: await ordersForCart(shopper.id, report.cartId),
    charges: (await providerIntents(charges)).succeeded,
  };
}

function reported(report: StormReport) {
  if (!report.provider.available) throw new Error(report.provider.detail);
  return {
    orders: report.orders,
    charges: report.provider.charges,
    money: report.provider.amountCharged,
  };
}

const statuses = (responses: RawResponse[]) => responses.map((response) => response.status);
const MUG = 1800;

describe("a storm of 10 identical requests, per strategy", () => {
  it("no key: every request is a new order and a new charge", async () => {
    const { report, responses } = await storm(shopper, "no_key", 10);
    expect(statuses(responses)).toEqual(Array(10).fill(201));
    expect(reported(report)).toEqual({ orders: 10, charges: 10, money: 10 * MUG });
    expect(await recorded(report, { metadata: { [LAB_STORM_METADATA]: report.id } })).toEqual({
      orders: 10,
      charges: 10,
    });
  });

  it("check, then insert: the report agrees with our tables and the provider's ledger", async () => {
    const { report } = await storm(shopper, "check_then_insert", 10);
    const counts = reported(report);
    expect(await recorded(report, { metadata: { [LAB_STORM_METADATA]: report.id } })).toEqual({
      orders: counts.orders,
      charges: counts.charges,
    });
    // Every charge wrote its order: nothing stopped the duplicates.
    expect(counts.orders).toBe(counts.charges);
    expect(counts.money).toBe(counts.charges * MUG);
  });

  itOnServer(
    "concurrency",
    "check, then insert: on PostgreSQL more than one request charges",
    async () => {
      const { report } = await storm(shopper, "check_then_insert", 10);
      expect(reported(report).charges).toBeGreaterThan(1);
    },
  );

  it("claim after the charge: one order, and a charge for every request that got past the replay check", async () => {
    const { report, responses } = await storm(shopper, "claim_after_charge", 10);
    const counts = reported(report);
    expect(counts.orders).toBe(1);
    expect(await recorded(report, { metadata: { [LAB_STORM_METADATA]: report.id } })).toEqual({
      orders: 1,
      charges: counts.charges,
    });
    expect(statuses(responses)).toEqual(Array(10).fill(201));
    if (inject("realPostgres")) expect(counts.charges).toBeGreaterThan(1);
  });

  it("the real checkout: exactly one order and one charge; the rest 409 or the replay", async () => {
    const { report, responses } = await storm(shopper, "atomic_claim", 10);
    expect(reported(report)).toEqual({ orders: 1, charges: 1, money: MUG });
    expect(statuses(responses).filter((status) => status !== 201 && status !== 409)).toEqual([]);
    expect(
      responses.filter(
        (response) => response.status === 201 && response.headers["idempotent-replayed"] !== "true",
      ),
    ).toHaveLength(1);
    expect(await ordersForCart(shopper.id, report.cartId)).toBe(1);
    expect(report.request).toMatchObject({
      path: "/api/orders",
      headers: { "Idempotency-Key": report.idempotencyKey },
    });
  });
});

describe("storms as a resource", () => {
  it("lists the account's storms newest first, each with its report", async () => {
    const account = await createAccount();
    const first = await api(account.token, "POST", "/api/lab/storms", {
      strategy: "no_key",
      size: 2,
    });
    const second = await api(account.token, "POST", "/api/lab/storms", {
      strategy: "atomic_claim",
      size: 2,
    });
    const listed = await api(account.token, "GET", "/api/lab/storms");
    expect(listed.status).toBe(200);
    expect(listed.json).toMatchObject({ object: "list", has_more: false });
    expect((listed.json.data as StormReport[]).map((one) => one.id)).toEqual([
      second.json.id,
      first.json.id,
    ]);
    expect(second.json).toMatchObject({
      object: "lab_storm",
      strategy: "atomic_claim",
      size: 2,
      orders: 0,
      provider: { available: true, charges: 0 },
    });
    expect(first.json.idempotencyKey).toBeNull();
  });

  it("returns each design's latest storm and crash run however many runs came since, where the latest 20 have lost them", async () => {
    const account = await createAccount();
    const start = async (run: object) => {
      const started = await api(account.token, "POST", "/api/lab/storms", run);
      expect(started.status).toBe(201);
      return started.json;
    };
    const earlyStorm = await start({ strategy: "atomic_claim", size: 2 });
    const paid = await fetch(`${baseUrl()}${earlyStorm.request.path}`, {
      method: "POST",
      headers: { ...earlyStorm.request.headers, Authorization: `Bearer ${account.token}` },
      body: JSON.stringify(earlyStorm.request.body),
    });
    expect(paid.status).toBe(201);
    const earlyCrash = await start({ strategy: "powertools", kind: "crash" });
    // More than 20 later runs, each after the one before.
    const later: StormReport[] = [];
    for (let run = 0; run < 21; run++) later.push(await start({ strategy: "no_key", size: 2 }));
    // Another account's runs are not this account's latest.
    const stranger = await createAccount();
    expect(
      (
        await api(stranger.token, "POST", "/api/lab/storms", {
          strategy: "atomic_claim",
          size: 2,
        })
      ).status,
    ).toBe(201);
    const latestTwenty = (await api(account.token, "GET", "/api/lab/storms")).json as unknown as {
      data: StormReport[];
      has_more: boolean;
    };
    expect(latestTwenty.has_more).toBe(true);
    expect(latestTwenty.data.map((run) => run.id)).not.toContain(earlyStorm.id);
    expect(latestTwenty.data.map((run) => run.id)).not.toContain(earlyCrash.id);

    const ofEachDesign = await api(account.token, "GET", "/api/lab/latest-runs");
    expect(ofEachDesign.status).toBe(200);
    const listed = ofEachDesign.json as unknown as { data: StormReport[]; has_more: boolean };
    expect(listed.has_more).toBe(false);
    expect(listed.data.map(({ id, strategy, kind }) => ({ id, strategy, kind }))).toEqual([
      { id: later.at(-1)!.id, strategy: "no_key", kind: "storm" },
      { id: earlyCrash.id, strategy: "powertools", kind: "crash" },
      { id: earlyStorm.id, strategy: "atomic_claim", kind: "storm" },
    ]);
    // Each with its report, counted as GET /api/lab/storms/{id} counts it.
    expect(listed.data[2]).toMatchObject({ orders: 1, provider: { available: true, charges: 1 } });
    expect(listed.data[2]).toEqual(
      (await api(account.token, "GET", `/api/lab/storms/${earlyStorm.id}`)).json,
    );
  });

  it.each([
    [{ strategy: "no_key", size: 7 }, "size"],
    [{ strategy: "no_key", size: 1000 }, "size"],
    [{ strategy: "no_key", size: "10" }, "size"],
    [{ strategy: "retry_harder", size: 10 }, "strategy"],
    [{ size: 10 }, "strategy"],
  ])("refuses %j with a 400 naming %s, and starts nothing", async (body, field) => {
    const account = await createAccount();
    const refused = await api(account.token, "POST", "/api/lab/storms", body);
    expect(refused.status).toBe(400);
    expect(refused.json).toMatchObject({
      type: "/problems/invalid-body",
      errors: [expect.objectContaining({ path: field })],
    });
    expect((await api(account.token, "GET", "/api/lab/storms")).json.data).toEqual([]);
  });

  it("answers another account's storm exactly as one that never was: 404", async () => {
    const owner = await createAccount();
    const other = await createAccount();
    const started = await api(owner.token, "POST", "/api/lab/storms", {
      strategy: "no_key",
      size: 2,
    });
    const foreign = await fetch(`${baseUrl()}/api/lab/storms/${started.json.id}`, {
      headers: { Authorization: `Bearer ${other.token}` },
    });
    const missingId = randomUUID();
    const missing = await fetch(`${baseUrl()}/api/lab/storms/${missingId}`, {
      headers: { Authorization: `Bearer ${other.token}` },
    });
    expect(foreign.status).toBe(404);
    expect((await foreign.text()).replaceAll(started.json.id, "<id>")).toBe(
      (await missing.text()).replaceAll(missingId, "<id>"),
    );
    expect((await api(other.token, "GET", "/api/lab/storms/not-a-uuid")).status).toBe(404);
  });

  it("does not count another account's requests into a storm, even sent with its cart", async () => {
    const owner = await createAccount();
    const intruder = await createAccount();
    const started = await api(owner.token, "POST", "/api/lab/storms", {
      strategy: "no_key",
      size: 2,
    });
    const { request } = started.json;
    const sent = await fetch(`${baseUrl()}${request.path}`, {
      method: "POST",
      headers: { ...request.headers, Authorization: `Bearer ${intruder.token}` },
      body: JSON.stringify(request.body),
    });
    expect(sent.status).toBe(201);
    const report = await api(owner.token, "GET", `/api/lab/storms/${started.json.id}`);
    expect(report.json).toMatchObject({ orders: 0, provider: { charges: 0 } });
  });

  it("needs credentials", async () => {
    expect(
      (await api(undefined, "POST", "/api/lab/storms", { strategy: "no_key", size: 2 })).status,
    ).toBe(401);
    expect((await api(undefined, "GET", "/api/lab/storms")).status).toBe(401);
  });
});

const KEYED_LAB_ROUTES = [
  "/api/lab/check-then-insert-orders",
  "/api/lab/claim-after-charge-orders",
  "/api/lab/dynamodb-orders",
  "/api/lab/redis-orders",
  "/api/lab/powertools-orders",
];

describe("the lab's keyed strategies' own answers", () => {
  it.each(KEYED_LAB_ROUTES)(
    "%s needs credentials and refuses a body that is not a cart, before anything is charged",
    async (path) => {
      const anonymous = await fetch(`${baseUrl()}${path}`, {
        method: "POST",
        headers: { "Content-Type": "application/json", "Idempotency-Key": randomUUID() },
        body: "{}",
      });
      expect(anonymous.status).toBe(401);
      const account = await createAccount();
      const malformed = await fetch(`${baseUrl()}${path}`, {
        method: "POST",
        headers: {
          Authorization: `Bearer ${account.token}`,
          "Content-Type": "application/json",
          "Idempotency-Key": randomUUID(),
        },
        body: '{"cartId": "c", "items": [{"sku": "mug-ceramic-350", "quantity": 0}]',
      });
      expect(malformed.status).toBe(400);
      expect(await malformed.json()).toMatchObject({ type: "/problems/malformed-json" });
      expect(await ordersForCart(account.id, "c")).toBe(0);
    },
  );

  it.each(KEYED_LAB_ROUTES)(
    "%s needs an Idempotency-Key, and replays a finished one",
    async (path) => {
      const account = await createAccount();
      const body = JSON.stringify({
        cartId: `cart_${randomUUID()}`,
        items: [{ sku: "mug-ceramic-350", quantity: 1 }],
      });
      const headers = {
        Authorization: `Bearer ${account.token}`,
        "Content-Type": "application/json",
      };
      const keyless = await fetch(`${baseUrl()}${path}`, { method: "POST", headers, body });
      expect(keyless.status).toBe(400);
      expect(await keyless.json()).toMatchObject({
        type: "/problems/idempotency-key-invalid",
      });

      const key = randomUUID();
      const first = await fetch(`${baseUrl()}${path}`, {
        method: "POST",
        headers: { ...headers, "Idempotency-Key": key },
        body,
      });
      const again = await fetch(`${baseUrl()}${path}`, {
        method: "POST",
        headers: { ...headers, "Idempotency-Key": key },
        body,
      });
      expect(first.status).toBe(201);
      expect(again.status).toBe(201);
      expect(again.headers.get("idempotent-replayed")).toBe("true");
      expect(await again.text()).toBe(await first.text());
    },
  );
});
