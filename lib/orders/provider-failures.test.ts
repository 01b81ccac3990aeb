import { randomUUID } from "node:crypto";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { KeyedCall } from "@oncepay/idempotency";
import {
  appSimulator,
  ledgerFor,
  newSecretKey,
  setFaults,
  withTestSimulator,
} from "@/lib/testing/payment-simulator";
import { StripePaymentProvider } from "@/lib/payments/stripe-provider";
import { cartBody, createAccount, postOrder } from "@/lib/testing/api-client";
import { chargesOnly, shopEngineOn } from "@/lib/testing/shop-engine";
import { closeTestDb, countRows, keyRow, testDb } from "@/lib/testing/database";

/**
 * When the payment provider fails, the key must end up where a retry can do
 * the right thing: released when nothing was charged, resumable at once when
 * nobody knows, and never charged twice. Real Stripe SDK, real simulator,
 * real database.
 */
afterAll(closeTestDb);

describe("the checkout endpoint when the provider fails", () => {
  const simulator = withTestSimulator();

  function checkoutCall(scope: string, key: string, body: unknown): KeyedCall {
    return { scope, key, method: "POST", path: "/api/orders", body };
  }

  it("keeps the key in flight but hands it back when the charge's outcome is unknown; the retry resumes at once and charges once", async () => {
    const shopper = await createAccount();
    const key = randomUUID();
    const body = cartBody();
    // The provider answers after our client gave up, and the SDK may not retry: the outcome is unknown.
    const provider = new StripePaymentProvider({
      secretKey: await newSecretKey(simulator),
      simulatorUrl: simulator.url,
      maxNetworkRetries: 0,
      timeoutMs: 300,
    });
    const checkout = shopEngineOn(testDb(), chargesOnly(provider));

    await setFaults(simulator, { latencyMs: 800 });
    const first = await checkout.checkout(checkoutCall(shopper.id, key, body));
    await new Promise((resolve) => setTimeout(resolve, 1000)); // the simulator finishes the charge meanwhile
    await setFaults(simulator, {});
    expect(first).toMatchObject({ kind: "dependency-unavailable", retryAfterSeconds: 1 });
    const row = await keyRow(shopper.id, key);
    expect(row).toMatchObject({ state: "in_flight", recovery_point: "payment_started" });
    expect(row!.lease_expires_at!.getTime()).toBeLessThanOrEqual(Date.now());
    // The simulator did charge, after our client had given up.
    const providerKey = row!.provider_key;
    expect((await ledgerFor(simulator, { idempotencyKey: providerKey })).charges).toHaveLength(1);

    const retry = await checkout.checkout(checkoutCall(shopper.id, key, body));
    expect(retry).toMatchObject({ kind: "completed", stored: { status: 201 } });
    const ledger = await ledgerFor(simulator, { idempotencyKey: providerKey });
    expect(ledger.charges).toHaveLength(1);
    expect(retry.kind === "completed" && retry.stored.body).toMatchObject({
      payment: { id: ledger.payment_intents[0]?.id },
    });
    expect(await countRows("orders", shopper.id)).toBe(1);
  });

  it("releases the key when the provider refuses the request itself (nothing charged), so the same key works once fixed", async () => {
    const shopper = await createAccount();
    const key = randomUUID();
    const body = cartBody();
    // A test key the simulator refuses as malformed: 401, a configuration error.
    const misconfigured = new StripePaymentProvider({
      secretKey: "sk_test_not-a-valid-key!",
      simulatorUrl: simulator.url,
    });

    const refused = await shopEngineOn(testDb(), chargesOnly(misconfigured)).checkout(
      checkoutCall(shopper.id, key, body),
    );
    expect(refused).toMatchObject({ kind: "dependency-rejected" });
    expect(await keyRow(shopper.id, key)).toBeUndefined();
    expect(await countRows("payments", shopper.id)).toBe(0);

    const fixed = new StripePaymentProvider({
      secretKey: await newSecretKey(simulator),
      simulatorUrl: simulator.url,
    });
    const retry = await shopEngineOn(testDb(), chargesOnly(fixed)).checkout(
      checkoutCall(shopper.id, key, body),
    );
    expect(retry).toMatchObject({ kind: "completed", stored: { status: 201 } });
    expect(await countRows("orders", shopper.id)).toBe(1);
  });
});

describe("the app when the provider's answer is lost (over HTTP)", () => {
  afterEach(async () => {
    await setFaults(appSimulator(), {});
  });

  it("asks again under the same provider key when the provider's answer is dropped, and gets the first charge back: one 201, one charge", async () => {
    const shopper = await createAccount();
    const key = randomUUID();
    // The simulator charges, saves its answer, then drops the connection.
    expect((await setFaults(appSimulator(), { failNext: "drop_connection" })).status).toBe(200);

    const order = await postOrder({ token: shopper.token, key });
    expect(order.response.status).toBe(201);
    const row = await keyRow(shopper.id, key);
    const ledger = await ledgerFor(appSimulator(), {
      idempotencyKey: row!.provider_key,
    });
    expect(ledger.payment_intents).toHaveLength(1);
    expect(ledger.charges.map((charge) => charge.status)).toEqual(["succeeded"]);
    expect(JSON.parse(order.text)).toMatchObject({
      payment: { id: ledger.payment_intents[0]?.id },
    });
  });
});
