import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RefundKeyInspection } from "@/lib/ledger/key-inspection";
import { LOCAL_SIMULATOR_SECRET_KEY } from "@/lib/payments/simulator/process";
import { PROVIDER_KEY_METADATA, StripePaymentProvider } from "@/lib/payments/stripe-provider";
import {
  baseUrl,
  createAccount,
  postOrder,
  postRefund,
  type ApiAccount,
} from "@/lib/testing/api-client";
import { closeTestDb, expireLease, refundsOfOrder } from "@/lib/testing/database";
import { appSimulator } from "@/lib/testing/payment-simulator";

/**
 * GET /api/keys/{key} for a refund's key: the refund's own recovery points,
 * the request it stands for, the refund row it made, and the refunds the
 * payment provider holds for the order under the key's provider key, as
 * the provider's own records say (read here through the Stripe SDK).
 */
afterAll(closeTestDb);

let account: ApiAccount;
beforeAll(async () => {
  account = await createAccount();
});

const provider = () =>
  new StripePaymentProvider({
    secretKey: LOCAL_SIMULATOR_SECRET_KEY,
    simulatorUrl: appSimulator().url,
  });

async function paidOrder(): Promise<{ id: string; amount: number; paymentId: string }> {
  const { response, text } = await postOrder({ token: account.token, key: randomUUID() });
  expect(response.status).toBe(201);
  const order = JSON.parse(text);
  return { id: order.id, amount: order.amount, paymentId: order.payment.id };
}

async function inspect(key: string): Promise<{ status: number; body: RefundKeyInspection }> {
  const response = await fetch(`${baseUrl()}/api/keys/${encodeURIComponent(key)}`, {
    headers: { Authorization: `Bearer ${account.token}` },
  });
  return { status: response.status, body: (await response.json()) as RefundKeyInspection };
}

describe("GET /api/keys/{key} for a refund's key", () => {
  it("shows the refund: its points in order, its request, its row, and the provider's one refund under its provider key", async () => {
    const order = await paidOrder();
    const key = randomUUID();
    const made = await postRefund({
      token: account.token,
      orderId: order.id,
      key,
      body: { amount: 700 },
    });
    expect(made.response.status).toBe(201);
    const refund = made.json() as { id: string; providerRefundId: string };

    // The request is recorded behind its answer: wait for it, never assume it.
    await expect.poll(async () => (await inspect(key)).body.requests.seen).toBe(1);
    const { status, body } = await inspect(key);

    expect(status).toBe(200);
    expect(body).toMatchObject({
      object: "idempotency_key",
      key,
      operation: "refund",
      state: "complete",
      recoveryPoint: "finished",
      lease: null,
      response: { status: 201 },
      request: { method: "POST", path: `/api/orders/${order.id}/refunds` },
      refund: {
        id: refund.id,
        orderId: order.id,
        orderLocation: `/api/orders/${order.id}`,
        amount: 700,
        currency: "usd",
        status: "succeeded",
        providerRefundId: refund.providerRefundId,
        refusalCode: null,
      },
    });
    const { claimed, refundStarted, providerAnswered, finished } = body.reached;
    const times = [claimed, refundStarted, providerAnswered, finished].map((at) => Date.parse(at!));
    expect(times.every(Number.isFinite)).toBe(true);
    expect([...times].sort((a, b) => a - b)).toEqual(times);

    // The provider's records: the order's PaymentIntent holds this one refund, under this provider key.
    const atProvider = await provider().refundsOf(order.paymentId);
    expect(atProvider).toHaveLength(1);
    expect(atProvider[0]!.metadata[PROVIDER_KEY_METADATA]).toBe(body.providerKey);
    expect(body.provider).toEqual({
      available: true,
      paymentIntent: order.paymentId,
      refunds: [
        {
          id: refund.providerRefundId,
          status: "succeeded",
          amount: 700,
          currency: "usd",
          createdAt: atProvider[0]!.createdAt.toISOString(),
        },
      ],
    });
    expect(body.requests).toMatchObject({
      seen: 1,
      data: [{ attempt: 1, status: 201, answer: "completed" }],
    });
  });

  it("lists only the refunds made under its own provider key, not the order's other refunds", async () => {
    const order = await paidOrder();
    const first = randomUUID();
    const second = randomUUID();
    for (const key of [first, second])
      expect(
        (await postRefund({ token: account.token, orderId: order.id, key, body: { amount: 500 } }))
          .response.status,
      ).toBe(201);

    const [one, two] = [(await inspect(first)).body, (await inspect(second)).body];
    expect(one.providerKey).not.toBe(two.providerKey);
    for (const inspection of [one, two]) {
      expect(inspection.provider).toMatchObject({ available: true, refunds: [{ amount: 500 }] });
      if (!inspection.provider.available) throw new Error("provider unavailable");
      expect(inspection.provider.refunds[0]!.id).toBe(inspection.refund!.providerRefundId);
    }
  });

  it("shows a refund refused for more than is left: complete with its 422, no refund row, nothing at the provider", async () => {
    const order = await paidOrder();
    const key = randomUUID();
    const refused = await postRefund({
      token: account.token,
      orderId: order.id,
      key,
      body: { amount: order.amount + 1 },
    });
    expect(refused.response.status).toBe(422);

    const { body } = await inspect(key);
    expect(body).toMatchObject({
      operation: "refund",
      state: "complete",
      recoveryPoint: "finished",
      response: { status: 422 },
      refund: null,
      provider: { available: true, paymentIntent: order.paymentId, refunds: [] },
      reached: { refundStarted: null, providerAnswered: null },
    });
  });

  it("shows a refund left in flight after the provider refunded: its pending row and the provider's refund, then the retry that finished it", async () => {
    const order = await paidOrder();
    const key = randomUUID();
    const failed = await postRefund({
      token: account.token,
      orderId: order.id,
      key,
      body: { amount: 300 },
      headers: { "OncePay-Fault": "after-charge" },
    });
    expect(failed.response.status).toBe(500);

    const inFlight = (await inspect(key)).body;
    expect(inFlight).toMatchObject({
      state: "in_flight",
      recoveryPoint: "refund_started",
      response: null,
      lease: { expired: false },
      refund: { status: "pending", amount: 300, providerRefundId: null },
      // Refunded already, though nothing of ours says so yet: the provider's side shows it.
      provider: { available: true, refunds: [{ status: "succeeded", amount: 300 }] },
    });
    expect(inFlight.reached.refundStarted).not.toBeNull();
    expect(inFlight.reached.providerAnswered).toBeNull();

    await expireLease(account.id, key);
    const retried = await postRefund({
      token: account.token,
      orderId: order.id,
      key,
      body: { amount: 300 },
    });
    expect(retried.response.status).toBe(201);
    const finished = (await inspect(key)).body;
    expect(finished).toMatchObject({
      state: "complete",
      recoveryPoint: "finished",
      refund: { status: "succeeded", amount: 300 },
      provider: { refunds: [{ amount: 300 }] },
    });
    if (!finished.provider.available || !inFlight.provider.available)
      throw new Error("provider unavailable");
    expect(finished.provider.refunds.map((refund) => refund.id)).toEqual(
      inFlight.provider.refunds.map((refund) => refund.id),
    );
    expect((await refundsOfOrder(order.id)).refunds).toHaveLength(1);
  });
});
