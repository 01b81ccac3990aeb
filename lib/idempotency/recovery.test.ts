import { randomUUID } from "node:crypto";
import { setTimeout as delay } from "node:timers/promises";
import { afterAll, describe, expect, inject, it } from "vitest";
import { createEngine, recoverAbandonedKeys } from "@oncepay/idempotency";
import { pgStore } from "@oncepay/idempotency/pg";
import { CHECKOUT, checkoutOperation } from "@/lib/orders/checkout";
import { sqlOrderRows } from "@/lib/orders/order-rows";
import type { PaymentProvider } from "@/lib/payments/provider";
import { appSimulator, ledgerFor } from "@/lib/testing/payment-simulator";
import { LOCAL_SIMULATOR_SECRET_KEY } from "@/lib/payments/simulator/process";
import { StripePaymentProvider } from "@/lib/payments/stripe-provider";
import { cartBody, createAccount, postOrder } from "@/lib/testing/api-client";
import { closeTestDb, countRows, expireLease, keyRow, testDb } from "@/lib/testing/database";
import { chargesOnly, shopEngineOn, TEST_KEY_TIMINGS } from "@/lib/testing/shop-engine";
import { itOnServer } from "@/lib/testing/postgres-server-only";

/**
 * The recovery worker against the database the app under test uses: attempts
 * die over real HTTP (injected faults), the worker finishes what they left.
 */
afterAll(closeTestDb);

/** The provider the app under test uses: same simulator, same API key, so provider keys meet. */
function appsPaymentProvider() {
  return new StripePaymentProvider({
    secretKey: LOCAL_SIMULATOR_SECRET_KEY,
    simulatorUrl: inject("paymentSimulatorUrl"),
  });
}

/**
 * The app's provider, counting the charges this worker asks for, by provider
 * key: the worker takes over every abandoned key in the shared database, so
 * other test files' keys may be among them.
 */
function countingProvider(chargeDelayMs = 0): PaymentProvider & {
  callsFor(providerKey: string): number;
  /** The most charges that were in flight at once. */
  peak(): number;
} {
  const provider = appsPaymentProvider();
  const asked: string[] = [];
  let running = 0;
  let peak = 0;
  return {
    name: provider.name,
    callsFor: (providerKey) => asked.filter((key) => key === providerKey).length,
    peak: () => peak,
    async charge(request) {
      asked.push(request.idempotencyKey);
      peak = Math.max(peak, ++running);
      try {
        if (chargeDelayMs > 0) await delay(chargeDelayMs);
        return await provider.charge(request);
      } finally {
        running--;
      }
    },
  };
}

function worker(concurrency = 4, chargeDelayMs = 0) {
  const provider = countingProvider(chargeDelayMs);
  const engine = shopEngineOn(testDb(), chargesOnly(provider));
  return {
    provider,
    runOnce: () => engine.recover({ batchSize: 1000, concurrency }),
  };
}

/** A store on the database under test, for a test that builds an engine of its own. */
function testStore() {
  return pgStore(testDb(), { ...TEST_KEY_TIMINGS, statements: "unnamed" });
}

describe("the recovery worker", () => {
  it("completes a request that died after the charge, once its lease has expired; the client's retry then gets the replay", async () => {
    const shopper = await createAccount();
    const key = randomUUID();
    const body = cartBody();
    expect(
      (
        await postOrder({
          token: shopper.token,
          key,
          body,
          headers: { "OncePay-Fault": "after-charge" },
        })
      ).response.status,
    ).toBe(500);

    // Lease still live: the worker leaves it alone.
    await worker().runOnce();
    expect(await keyRow(shopper.id, key)).toMatchObject({
      state: "in_flight",
      recovery_point: "payment_started",
    });

    await expireLease(shopper.id, key);
    const recovering = worker();
    const report = await recovering.runOnce();
    expect(report.completed).toBeGreaterThanOrEqual(1);
    const row = await keyRow(shopper.id, key);
    expect(row).toMatchObject({ state: "complete", response_status: 201 });
    expect(await countRows("orders", shopper.id)).toBe(1);
    expect(await countRows("payments", shopper.id)).toBe(1);
    // The worker asked the provider again (nothing recorded its answer), and got the first charge back.
    expect(recovering.provider.callsFor(row!.provider_key)).toBe(1);
    const ledger = await ledgerFor(appSimulator(), {
      idempotencyKey: row!.provider_key,
    });
    expect(ledger.charges).toHaveLength(1);
    expect(row!.response_body).toMatchObject({ payment: { id: ledger.payment_intents[0]?.id } });

    const retry = await postOrder({ token: shopper.token, key, body });
    expect(retry.response.status).toBe(201);
    expect(retry.response.headers.get("idempotent-replayed")).toBe("true");
    expect(JSON.parse(retry.text)).toEqual(row!.response_body);
  });

  it("finishes a request whose order's commit failed after the charge by asking the provider again under the same key: the provider's answer was to commit with the order, and it returns the first charge", async () => {
    const shopper = await createAccount();
    const key = randomUUID();
    const body = cartBody();
    expect(
      (
        await postOrder({
          token: shopper.token,
          key,
          body,
          headers: { "OncePay-Fault": "before-commit" },
        })
      ).response.status,
    ).toBe(500);
    const died = await keyRow(shopper.id, key);
    expect(died).toMatchObject({ state: "in_flight", recovery_point: "payment_started" });
    expect(died!.progress).not.toHaveProperty("charge");
    expect(await countRows("orders", shopper.id)).toBe(0);

    await expireLease(shopper.id, key);
    const recovering = worker();
    expect((await recovering.runOnce()).completed).toBeGreaterThanOrEqual(1);
    expect(recovering.provider.callsFor(died!.provider_key)).toBe(1);
    expect(await countRows("orders", shopper.id)).toBe(1);
    const ledger = await ledgerFor(appSimulator(), {
      idempotencyKey: died!.provider_key,
    });
    expect(ledger.charges).toHaveLength(1);
    expect(await keyRow(shopper.id, key)).toMatchObject({
      state: "complete",
      response_status: 201,
      response_body: { payment: { id: ledger.payment_intents[0]?.id } },
    });
  });

  it("finishes a declined charge whose commit failed as the 402 the provider replays under the same key", async () => {
    const shopper = await createAccount();
    const key = randomUUID();
    const body = cartBody({ paymentMethod: "pm_card_chargeDeclinedInsufficientFunds" });
    expect(
      (
        await postOrder({
          token: shopper.token,
          key,
          body,
          headers: { "OncePay-Fault": "before-commit" },
        })
      ).response.status,
    ).toBe(500);
    const died = await keyRow(shopper.id, key);
    expect(died).toMatchObject({ recovery_point: "payment_started" });

    await expireLease(shopper.id, key);
    const recovering = worker();
    expect((await recovering.runOnce()).completed).toBeGreaterThanOrEqual(1);
    expect(recovering.provider.callsFor(died!.provider_key)).toBe(1);
    expect(await keyRow(shopper.id, key)).toMatchObject({
      state: "complete",
      response_status: 402,
      response_body: { declineCode: "insufficient_funds" },
    });
    expect(await countRows("orders", shopper.id)).toBe(0);
    const { rows } = await testDb().query(
      `SELECT status::text, decline_code FROM payments WHERE account_id = $1`,
      [shopper.id],
    );
    expect(rows).toEqual([{ status: "declined", decline_code: "insufficient_funds" }]);

    const retry = await postOrder({ token: shopper.token, key, body });
    expect(retry.response.status).toBe(402);
    expect(retry.response.headers.get("idempotent-replayed")).toBe("true");
  });

  it("resumes with the cart priced when the charge began, even if prices changed since: same provider parameters, one charge, the charged amount recorded", async () => {
    const shopper = await createAccount();
    const key = randomUUID();
    const body = cartBody();
    const first = await postOrder({
      token: shopper.token,
      key,
      body,
      headers: { "OncePay-Fault": "after-charge" },
    });
    expect(first.response.status).toBe(500);
    const died = await keyRow(shopper.id, key);
    const chargedTotal = (died!.progress.cart as { total: number }).total;

    // A deploy raised every price while the key was in flight.
    const provider = countingProvider();
    const checkout = checkoutOperation({ provider, orderRows: sqlOrderRows });
    const repriced: typeof checkout = {
      ...checkout,
      parse(json) {
        const parsed = checkout.parse(json);
        if (!parsed.ok) return parsed;
        const { input } = parsed;
        return {
          ...parsed,
          input: {
            ...input,
            total: input.total + 500,
            lines: input.lines.map((line) => ({ ...line, amount: line.amount + 500 })),
          },
        };
      },
    };
    await expireLease(shopper.id, key);
    const report = await recoverAbandonedKeys(
      createEngine({ store: testStore(), operations: [repriced] }),
      { batchSize: 1000 },
    );

    expect(report.completed).toBeGreaterThanOrEqual(1);
    expect(repriced.name).toBe(CHECKOUT);
    expect(provider.callsFor(died!.provider_key)).toBe(1);
    const ledger = await ledgerFor(appSimulator(), {
      idempotencyKey: died!.provider_key,
    });
    expect(ledger.payment_intents.map((intent) => intent.amount)).toEqual([chargedTotal]);
    expect(ledger.charges).toHaveLength(1);
    const { rows } = await testDb().query(`SELECT total_amount FROM orders WHERE account_id = $1`, [
      shopper.id,
    ]);
    expect(rows).toEqual([{ total_amount: chargedTotal }]);
  });

  it("keeps a resumed key in flight when the provider refuses the repeat, since the first attempt's charge may exist; a later run finishes it once", async () => {
    const shopper = await createAccount();
    const key = randomUUID();
    expect(
      (await postOrder({ token: shopper.token, key, headers: { "OncePay-Fault": "after-charge" } }))
        .response.status,
    ).toBe(500);
    await expireLease(shopper.id, key);

    // The provider's credentials broke meanwhile: every call is refused (401).
    const refusing = shopEngineOn(
      testDb(),
      new StripePaymentProvider({
        secretKey: "sk_test_not-a-valid-key!",
        simulatorUrl: inject("paymentSimulatorUrl"),
      }),
    );
    const report = await refusing.recover({ batchSize: 1000, concurrency: 4 });
    expect(report.failed).toBeGreaterThanOrEqual(1);
    const kept = await keyRow(shopper.id, key);
    expect(kept).toMatchObject({ state: "in_flight", recovery_point: "payment_started" });
    expect(kept!.lease_expires_at!.getTime()).toBeLessThanOrEqual(Date.now());

    const recovering = worker();
    expect((await recovering.runOnce()).completed).toBeGreaterThanOrEqual(1);
    expect(await keyRow(shopper.id, key)).toMatchObject({
      id: kept!.id,
      state: "complete",
      response_status: 201,
    });
    expect(
      (
        await ledgerFor(appSimulator(), {
          idempotencyKey: kept!.provider_key,
        })
      ).charges,
    ).toHaveLength(1);
    expect(await countRows("orders", shopper.id)).toBe(1);
  });

  it("releases a key whose attempt died before charging, so a retry runs afresh", async () => {
    const shopper = await createAccount();
    const key = randomUUID();
    const body = cartBody();
    // An attempt that claimed the key and then vanished (no release ran).
    const claimed = await testStore().claim({
      scope: shopper.id,
      key,
      operation: CHECKOUT,
      fingerprint: "0".repeat(64),
      request: body,
      firstPoint: "claimed",
    });
    expect(claimed.kind).toBe("claimed");
    await expireLease(shopper.id, key);

    const report = await worker().runOnce();
    expect(report.released).toBeGreaterThanOrEqual(1);
    expect(await keyRow(shopper.id, key)).toBeUndefined();
    expect(await countRows("payments", shopper.id)).toBe(0);
  });

  it("resumes several abandoned keys at once, up to its concurrency, and finishes each once", async () => {
    const shopper = await createAccount();
    const keys = Array.from({ length: 8 }, () => randomUUID());
    for (const key of keys) {
      await postOrder({ token: shopper.token, key, headers: { "OncePay-Fault": "after-charge" } });
      await expireLease(shopper.id, key);
    }
    // Each charge takes a while, as a provider's does, so the resumes overlap there.
    const recovering = worker(4, 200);
    const report = await recovering.runOnce();
    expect(report.completed).toBeGreaterThanOrEqual(keys.length);
    // Counted where the resumes wait: on the provider.
    expect(recovering.provider.peak()).toBe(4);
    for (const key of keys)
      expect(await keyRow(shopper.id, key)).toMatchObject({
        state: "complete",
        response_status: 201,
      });
    expect(await countRows("orders", shopper.id)).toBe(keys.length);
    expect(await countRows("payments", shopper.id)).toBe(keys.length);
  });

  // Two instances' workers racing for the same keys: a real race only on PostgreSQL.
  itOnServer(
    "concurrency",
    "finishes each abandoned key once when two workers run at the same time",
    async () => {
      const shopper = await createAccount();
      const keys = Array.from({ length: 5 }, () => randomUUID());
      for (const key of keys) {
        await postOrder({
          token: shopper.token,
          key,
          headers: { "OncePay-Fault": "after-charge" },
        });
        await expireLease(shopper.id, key);
      }
      await Promise.all([worker().runOnce(), worker().runOnce()]);
      for (const key of keys)
        expect(await keyRow(shopper.id, key)).toMatchObject({ state: "complete" });
      expect(await countRows("orders", shopper.id)).toBe(keys.length);
      expect(await countRows("payments", shopper.id)).toBe(keys.length);
    },
  );
});
