import { afterAll, describe, expect, inject, it } from "vitest";
import { newAdminKey } from "@/lib/payments/simulator/admin-key";
import { startPaymentSimulator } from "@/lib/payments/simulator/server";
import { closeTestDb, testDb } from "@/lib/testing/database";
import {
  adminFetch,
  newSecretKey,
  postIntent,
  withTestSimulator,
} from "@/lib/testing/payment-simulator";

/**
 * The admin API (/_simulator/*) shows every account's ledger, registers
 * accounts and sets faults that slow or fail every checkout: it answers
 * only a caller that presents the admin key, and a refused call does
 * nothing at all.
 */
const simulator = withTestSimulator();
afterAll(closeTestDb);

const ADMIN_CALLS = [
  ["GET", "/_simulator/health"],
  ["GET", "/_simulator/ledger"],
  ["GET", "/_simulator/faults"],
  ["PUT", "/_simulator/faults"],
  ["POST", "/_simulator/api_keys"],
  ["GET", "/_simulator/no-such-endpoint"],
] as const;

const registeredKeys = async () =>
  (await testDb().query<{ n: number }>(`SELECT count(*)::int AS n FROM payment_simulator.api_keys`))
    .rows[0]!.n;

async function expectRefused(response: Response): Promise<void> {
  expect(response.status).toBe(401);
  expect(response.headers.get("www-authenticate")).toBe('Bearer realm="payment-simulator-admin"');
  expect(response.headers.get("request-id")).toMatch(/^req_/);
  expect(await response.json()).toEqual({
    error: {
      type: "invalid_request_error",
      message: expect.stringContaining("needs its admin key"),
    },
  });
}

describe("an admin call without the admin key", () => {
  it.each(ADMIN_CALLS)("%s %s without Authorization: 401", async (method, path) => {
    await expectRefused(await fetch(`${simulator.url}${path}`, { method }));
  });

  it.each([
    ["another admin key", () => `Bearer ${newAdminKey()}`],
    ["the admin key cut short by one character", () => `Bearer ${simulator.adminKey.slice(0, -1)}`],
    ["the admin key with one more character", () => `Bearer ${simulator.adminKey}x`],
    ["the admin key as Basic auth", () => `Basic ${btoa(`${simulator.adminKey}:`)}`],
    ["the admin key with no scheme", () => simulator.adminKey],
    ["an empty Bearer", () => "Bearer "],
  ])("GET /_simulator/ledger with %s: 401", async (_case, authorization) => {
    await expectRefused(
      await fetch(`${simulator.url}/_simulator/ledger`, {
        headers: { Authorization: authorization() },
      }),
    );
  });

  it("with an account's API key (sk_test_…): 401, since an API key reaches one account and the admin API all of them", async () => {
    const apiKey = await newSecretKey(simulator);
    await expectRefused(
      await fetch(`${simulator.url}/_simulator/ledger`, {
        headers: { Authorization: `Bearer ${apiKey}` },
      }),
    );
  });

  it("changes nothing: no fault is set and no account registered", async () => {
    const accountsBefore = await registeredKeys();
    await expectRefused(
      await fetch(`${simulator.url}/_simulator/faults`, {
        method: "PUT",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ latencyMs: 30_000, failNext: "http_500" }),
      }),
    );
    await expectRefused(await fetch(`${simulator.url}/_simulator/api_keys`, { method: "POST" }));

    expect(await (await adminFetch(simulator, "/_simulator/faults")).json()).toEqual({
      latencyMs: 0,
      failNext: null,
    });
    expect(await registeredKeys()).toBe(accountsBefore);
    // No failNext is waiting either: the next charge goes through.
    const charged = await postIntent(simulator, {
      secretKey: await newSecretKey(simulator),
      body: "amount=1900&currency=usd&payment_method=pm_card_visa&confirm=true",
    });
    expect(charged.status).toBe(200);
  });
});

describe("an admin call with the admin key", () => {
  it.each(ADMIN_CALLS.filter(([, path]) => !path.includes("no-such")))(
    "%s %s: answered",
    async (method, path) => {
      const response = await adminFetch(simulator, path, {
        method,
        ...(method === "PUT" && { body: "{}" }),
      });
      expect([200, 201]).toContain(response.status);
    },
  );

  it("is accepted whatever the case of the Bearer scheme, as RFC 9110 has it", async () => {
    const response = await fetch(`${simulator.url}/_simulator/health`, {
      headers: { Authorization: `bearer ${simulator.adminKey}` },
    });
    expect(response.status).toBe(200);
  });
});

describe("the simulator's admin key at start-up", () => {
  it.each([
    ["too short", "a".repeat(31)],
    ["with a space", `${"a".repeat(20)} ${"b".repeat(20)}`],
    ["empty", ""],
  ])("a key %s stops it", async (_case, adminKey) => {
    await expect(
      startPaymentSimulator({ databaseUrl: inject("databaseUrl"), poolMax: 1, adminKey }),
    ).rejects.toThrow(/admin key must be at least 32 characters/);
  });
});
