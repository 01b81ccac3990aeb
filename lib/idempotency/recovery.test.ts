import { randomUUID } from "node:crypto";
import { afterAll, describe, expect, inject, it } from "vitest";
import type { IdempotentEndpoint } from "@/lib/idempotency/idempotent-endpoint";
import { PostgresIdempotencyStore, type Transaction } from "@/lib/idempotency/postgres-store";
import { recoverAbandonedKeys } from "@/lib/idempotency/recovery";
import { checkoutEndpoint } from "@/lib/orders/checkout";
import { SimulatedPaymentProvider } from "@/lib/payments/simulated-provider";
import { cartBody, createAccount, postOrder } from "@/lib/testing/api-client";
import { closeTestDb, countRows, expireLease, keyRow, testPrisma } from "@/lib/testing/database";

/**
 * The recovery worker against the database the app under test uses: attempts
 * die over real HTTP (injected faults), the worker finishes what they left.
 */
afterAll(closeTestDb);

function worker() {
  const store = new PostgresIdempotencyStore(testPrisma(), { leaseSeconds: 30, ttlSeconds: 24 * 60 * 60 });
  const endpoint = checkoutEndpoint({ store, provider: new SimulatedPaymentProvider() }) as IdempotentEndpoint<unknown, Transaction>;
  return {
    store,
    runOnce: () =>
      recoverAbandonedKeys({ store, endpointFor: (method, path) => (method === "POST" && path === "/api/orders" ? endpoint : undefined), batchSize: 1000 }),
  };
}

describe("the recovery worker", () => {
  it("completes a request that died after the charge, once its lease has expired; the client's retry then gets the replay", async () => {
    const shopper = await createAccount();
    const key = randomUUID();
    const body = cartBody();
    expect((await postOrder({ token: shopper.token, key, body, headers: { "OncePay-Fault": "after-charge" } })).response.status).toBe(500);

    // Lease still live: the worker leaves it alone.
    await worker().runOnce();
    expect(await keyRow(shopper.id, key)).toMatchObject({ state: "in_flight", recovery_point: "payment_started" });

    await expireLease(shopper.id, key);
    const report = await worker().runOnce();
    expect(report.completed).toBeGreaterThanOrEqual(1);
    const row = await keyRow(shopper.id, key);
    expect(row).toMatchObject({ state: "complete", response_status: 201 });
    expect(await countRows("orders", shopper.id)).toBe(1);
    expect(await countRows("payments", shopper.id)).toBe(1);

    const retry = await postOrder({ token: shopper.token, key, body });
    expect(retry.response.status).toBe(201);
    expect(retry.response.headers.get("idempotent-replayed")).toBe("true");
    expect(JSON.parse(retry.text)).toEqual(row!.response_body);
  });

  it("releases a key whose attempt died before charging, so a retry runs afresh", async () => {
    const shopper = await createAccount();
    const key = randomUUID();
    const body = cartBody();
    // An attempt that claimed the key and then vanished (no release ran).
    const claimed = await worker().store.claimKey({ accountId: shopper.id, key, method: "POST", path: "/api/orders", fingerprint: "0".repeat(64), body });
    expect(claimed.kind).toBe("claimed");
    await expireLease(shopper.id, key);

    const report = await worker().runOnce();
    expect(report.released).toBeGreaterThanOrEqual(1);
    expect(await keyRow(shopper.id, key)).toBeUndefined();
    expect(await countRows("payments", shopper.id)).toBe(0);
  });

  // Two instances' workers racing for the same keys: a real race only on PostgreSQL.
  it.runIf(inject("realPostgres"))("finishes each abandoned key once when two workers run at the same time", async () => {
    const shopper = await createAccount();
    const keys = Array.from({ length: 5 }, () => randomUUID());
    for (const key of keys) {
      await postOrder({ token: shopper.token, key, headers: { "OncePay-Fault": "after-charge" } });
      await expireLease(shopper.id, key);
    }
    await Promise.all([worker().runOnce(), worker().runOnce()]);
    for (const key of keys) expect(await keyRow(shopper.id, key)).toMatchObject({ state: "complete" });
    expect(await countRows("orders", shopper.id)).toBe(keys.length);
    expect(await countRows("payments", shopper.id)).toBe(keys.length);
  });
});
