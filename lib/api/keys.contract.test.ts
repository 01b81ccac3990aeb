import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CheckoutKeyInspection } from "@/lib/ledger/key-inspection";
import { PROVIDER_KEY_METADATA } from "@/lib/payments/stripe-provider";
import {
  baseUrl,
  cartBody,
  createAccount,
  postOrder,
  type ApiAccount,
} from "@/lib/testing/api-client";
import { closeTestDb, expireLease, keyRow, providerIntents } from "@/lib/testing/database";

/**
 * GET /api/keys/{key}: one key's life from our row and from the payment
 * provider's records, for its own account only.
 */
afterAll(closeTestDb);

let shopper: ApiAccount;
beforeAll(async () => {
  shopper = await createAccount();
});

async function inspect(
  token: string | undefined,
  key: string,
): Promise<{ status: number; text: string; body: CheckoutKeyInspection & { type?: string } }> {
  const response = await fetch(`${baseUrl()}/api/keys/${encodeURIComponent(key)}`, {
    headers: token ? { Authorization: `Bearer ${token}` } : {},
  });
  const text = await response.text();
  return { status: response.status, text, body: JSON.parse(text) };
}

const instants = (reached: CheckoutKeyInspection["reached"]) => [
  reached.claimed,
  reached.paymentStarted,
  reached.charged,
  reached.finished,
];

describe("GET /api/keys/{key}", () => {
  it("shows a paid key: each recovery point's time in order, the provider's one PaymentIntent and charge, and the order", async () => {
    const key = randomUUID();
    const paid = await postOrder({ token: shopper.token, key });
    const order = JSON.parse(paid.text);
    const row = await keyRow(shopper.id, key);

    const { status, body } = await inspect(shopper.token, key);

    expect(status).toBe(200);
    expect(body).toMatchObject({
      object: "idempotency_key",
      key,
      operation: "checkout",
      state: "complete",
      recoveryPoint: "finished",
      lease: null,
      response: { status: 201 },
      fingerprint: row!.fingerprint,
    });
    expect(body.request).toEqual({ method: "POST", path: "/api/orders" });
    const times = instants(body.reached).map((at) => Date.parse(at!));
    expect(times.every(Number.isFinite)).toBe(true);
    expect([...times].sort((a, b) => a - b)).toEqual(times);
    expect(body.providerKey).toBe(row!.provider_key);
    expect(body.provider).toMatchObject({
      available: true,
      paymentIntents: [
        {
          id: order.payment.id,
          status: "succeeded",
          amount: order.amount,
          charges: [{ status: "succeeded", amount: order.amount }],
        },
      ],
    });
    expect(body.order).toMatchObject({
      id: order.id,
      amount: order.amount,
      location: `/api/orders/${order.id}`,
    });
    expect(body.payments).toEqual([
      expect.objectContaining({ providerPaymentId: order.payment.id, status: "succeeded" }),
    ]);
    // The provider's own ledger agrees: one PaymentIntent, succeeded, under this provider key.
    expect(
      await providerIntents({ metadata: { [PROVIDER_KEY_METADATA]: body.providerKey } }),
    ).toEqual({ succeeded: 1, total: 1, amountCharged: order.amount });
  });

  it("shows a declined key: complete with its 402, no order, the decline in our rows and a failed charge at the provider", async () => {
    const key = randomUUID();
    const declined = await postOrder({
      token: shopper.token,
      key,
      body: cartBody({ paymentMethod: "pm_card_chargeDeclined" }),
    });
    expect(declined.response.status).toBe(402);

    const { body } = await inspect(shopper.token, key);

    expect(body).toMatchObject({
      state: "complete",
      response: { status: 402 },
      order: null,
      payments: [{ status: "declined", declineCode: "generic_decline" }],
    });
    expect(body.provider).toMatchObject({
      available: true,
      paymentIntents: [
        {
          status: "requires_payment_method",
          charges: [{ status: "failed", failureCode: "card_declined" }],
        },
      ],
    });
  });

  it("shows a key left in flight after the charge: its lease, then the lease run out, then the retry that finished it", async () => {
    const key = randomUUID();
    const body = cartBody();
    const failed = await postOrder({
      token: shopper.token,
      key,
      body,
      headers: { "OncePay-Fault": "after-charge" },
    });
    expect(failed.response.status).toBe(500);

    const inFlight = (await inspect(shopper.token, key)).body;
    expect(inFlight).toMatchObject({
      state: "in_flight",
      recoveryPoint: "payment_started",
      response: null,
      order: null,
      lease: { expired: false },
    });
    expect(inFlight.lease!.owner).toMatch(/^[0-9a-f-]{36}$/);
    expect(inFlight.reached.paymentStarted).not.toBeNull();
    expect(inFlight.reached.charged).toBeNull();
    // The charge happened although nothing of ours says so yet: the provider's side shows it.
    expect(inFlight.provider).toMatchObject({
      available: true,
      paymentIntents: [{ status: "succeeded", charges: [{ status: "succeeded" }] }],
    });

    await expireLease(shopper.id, key);
    expect((await inspect(shopper.token, key)).body.lease).toMatchObject({ expired: true });

    const retry = await postOrder({ token: shopper.token, key, body });
    expect(retry.response.status).toBe(201);
    const finished = (await inspect(shopper.token, key)).body;
    expect(finished).toMatchObject({
      state: "complete",
      recoveryPoint: "finished",
      lease: null,
      order: { id: JSON.parse(retry.text).id },
    });
    expect(instants(finished.reached).every((at) => at !== null)).toBe(true);
    expect(finished.provider).toMatchObject({
      paymentIntents: [
        { id: inFlight.provider.available ? inFlight.provider.paymentIntents[0]!.id : "" },
      ],
    });
  });

  it("answers another account's key exactly as a key that never was: 404", async () => {
    const key = randomUUID();
    expect((await postOrder({ token: shopper.token, key })).response.status).toBe(201);
    const other = await createAccount();

    const foreign = await inspect(other.token, key);
    const missing = await inspect(other.token, randomUUID());

    expect(foreign.status).toBe(404);
    expect(foreign.body).toMatchObject({
      type: "/problems/idempotency-key-not-found",
      status: 404,
    });
    expect(foreign.text).toBe(missing.text);
  });

  it("finds a key with characters that need percent-encoding in a path", async () => {
    const key = `k/${randomUUID()}?a=b#c%20&"d"`;
    const paid = await postOrder({ token: shopper.token, key });
    expect(paid.response.status).toBe(201);

    const { status, body } = await inspect(shopper.token, key);
    expect(status).toBe(200);
    expect(body.key).toBe(key);
  });

  it.each([
    ["a key longer than 255 characters", "k".repeat(256)],
    ["a key with a character outside printable ASCII", "café"],
    ["a key with a space", "two words"],
  ])("answers 404 for %s, which no request could have made", async (_case, key) => {
    const { status, body } = await inspect(shopper.token, key);
    expect(status).toBe(404);
    expect(body.type).toBe("/problems/idempotency-key-not-found");
  });

  it("needs credentials", async () => {
    expect((await inspect(undefined, randomUUID())).status).toBe(401);
  });
});
