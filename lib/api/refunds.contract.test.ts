import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LOCAL_SIMULATOR_SECRET_KEY } from "@/lib/payments/simulator/process";
import { StripePaymentProvider } from "@/lib/payments/stripe-provider";
import {
  baseUrl,
  cartBody,
  createAccount,
  getOrder,
  postOrder,
  postRefund,
  type ApiAccount,
} from "@/lib/testing/api-client";
import { closeTestDb, expireLease, keyRow, refundsOfOrder, testDb } from "@/lib/testing/database";
import { appSimulator } from "@/lib/testing/payment-simulator";
import { itOnServer } from "@/lib/testing/postgres-server-only";
import { shopEngineOn } from "@/lib/testing/shop-engine";

/**
 * The HTTP contract of POST /api/orders/{id}/refunds, against the built app
 * over real HTTP: once per key, never more than was charged (however many
 * refunds are in flight at once), and nothing refunded at the provider
 * that the shop does not record.
 */
let account: ApiAccount;

beforeAll(async () => {
  account = await createAccount();
});
afterAll(closeTestDb);

/** The provider's own records, read as the ledger reads them. */
const provider = () =>
  new StripePaymentProvider({
    secretKey: LOCAL_SIMULATOR_SECRET_KEY,
    simulatorUrl: appSimulator().url,
  });

interface PaidOrder {
  id: string;
  amount: number;
  paymentId: string;
}

/** A new paid order of `owner`'s (3600 + 1450 = 5050 cents). */
async function paidOrder(owner: ApiAccount = account): Promise<PaidOrder> {
  const { response, text } = await postOrder({ token: owner.token, key: randomUUID() });
  expect(response.status).toBe(201);
  const order = JSON.parse(text);
  return { id: order.id, amount: order.amount, paymentId: order.payment.id };
}

/** What the provider refunded of the order's payment, each refund's amount, oldest first. */
async function refundedAtProvider(order: PaidOrder): Promise<number[]> {
  const refunds = await provider().refundsOf(order.paymentId);
  return refunds.map((refund) => refund.amount).reverse();
}

describe("a refund", () => {
  it("refunds all that is left when the body names no amount: 201, the refund row, the payment's total and the provider agree", async () => {
    const order = await paidOrder();
    const key = randomUUID();
    const { response, json } = await postRefund({ token: account.token, orderId: order.id, key });

    expect(response.status).toBe(201);
    expect(response.headers.get("content-type")).toBe("application/json");
    const refund = json() as Record<string, unknown>;
    expect(refund).toMatchObject({
      object: "refund",
      orderId: order.id,
      status: "succeeded",
      amount: order.amount,
      currency: "usd",
    });
    expect(await refundsOfOrder(order.id)).toEqual({
      refunds: [
        { status: "succeeded", amount: order.amount, provider_refund_id: refund.providerRefundId },
      ],
      refundedAmount: order.amount,
    });
    expect(await refundedAtProvider(order)).toEqual([order.amount]);
    expect(await keyRow(account.id, key)).toMatchObject({
      state: "complete",
      recovery_point: "finished",
      response_status: 201,
    });
    const fetched = JSON.parse((await getOrder({ token: account.token, id: order.id })).text);
    expect(fetched.payment.refundedAmount).toBe(order.amount);
  });

  it("replays its answer under the same key, and refunds once", async () => {
    const order = await paidOrder();
    const key = randomUUID();
    const first = await postRefund({
      token: account.token,
      orderId: order.id,
      key,
      body: { amount: 700 },
    });
    const again = await postRefund({
      token: account.token,
      orderId: order.id,
      key,
      body: { amount: 700 },
    });

    expect(first.response.status).toBe(201);
    expect(again.response.status).toBe(201);
    expect(again.response.headers.get("idempotent-replayed")).toBe("true");
    expect(again.text).toBe(first.text);
    expect(await refundedAtProvider(order)).toEqual([700]);
    expect((await refundsOfOrder(order.id)).refundedAmount).toBe(700);
  });

  it("takes part after part, then the rest, then refuses a refund of an order refunded in full", async () => {
    const order = await paidOrder();
    const refund = (body: unknown) =>
      postRefund({ token: account.token, orderId: order.id, key: randomUUID(), body });

    expect((await refund({ amount: 1000 })).response.status).toBe(201);
    expect((await refund({ amount: 50 })).response.status).toBe(201);
    const rest = await refund({});
    expect(rest.response.status).toBe(201);
    expect((rest.json() as { amount: number }).amount).toBe(order.amount - 1050);
    const more = await refund({});

    expect(more.response.status).toBe(422);
    expect(more.json()).toMatchObject({
      type: "/problems/refund-exceeds-balance",
      status: 422,
    });
    expect(await refundedAtProvider(order)).toEqual([1000, 50, order.amount - 1050]);
    expect((await refundsOfOrder(order.id)).refundedAmount).toBe(order.amount);
  });

  it("refuses more than is left with 422, naming what is left, and refunds nothing", async () => {
    const order = await paidOrder();
    await postRefund({ token: account.token, orderId: order.id, body: { amount: 1000 } });
    const { response, json } = await postRefund({
      token: account.token,
      orderId: order.id,
      body: { amount: order.amount },
    });

    expect(response.status).toBe(422);
    expect((json() as { detail: string }).detail).toContain(`has ${order.amount - 1000} of`);
    expect(await refundedAtProvider(order)).toEqual([1000]);
    expect((await refundsOfOrder(order.id)).refundedAmount).toBe(1000);
  });

  it("answers 404 for another account's order, an unknown one and a path that is no id, and refunds nothing", async () => {
    const someoneElses = await paidOrder(await createAccount());
    for (const orderId of [someoneElses.id, randomUUID(), "not-an-id", "..%2F..%2Fapi"]) {
      const { response, json } = await postRefund({ token: account.token, orderId });
      expect(response.status, orderId).toBe(404);
      expect(json()).toMatchObject({ type: "/problems/order-not-found" });
    }
    expect(await refundedAtProvider(someoneElses)).toEqual([]);
    expect((await refundsOfOrder(someoneElses.id)).refundedAmount).toBe(0);
  });

  it("answers 401 without credentials and 400 to a body that is not JSON, and refunds nothing", async () => {
    const order = await paidOrder();
    const send = (headers: Record<string, string>, body: string) =>
      fetch(`${baseUrl()}/api/orders/${order.id}/refunds`, {
        method: "POST",
        headers: {
          "Content-Type": "application/json",
          "Idempotency-Key": randomUUID(),
          ...headers,
        },
        body,
      });

    expect((await send({}, "{}")).status).toBe(401);
    const malformed = await send({ Authorization: `Bearer ${account.token}` }, '{"amount": 1');
    expect(malformed.status).toBe(400);
    expect((await refundsOfOrder(order.id)).refundedAmount).toBe(0);
  });

  it("answers 404 for a declined checkout, which has no order to refund", async () => {
    const declined = await postOrder({
      token: account.token,
      key: randomUUID(),
      body: cartBody({ paymentMethod: "pm_card_chargeDeclined" }),
    });
    expect(declined.response.status).toBe(402);
    const { response } = await postRefund({ token: account.token, orderId: randomUUID() });
    expect(response.status).toBe(404);
  });

  it.each([
    [{ amount: 0 }, "amount"],
    [{ amount: -5 }, "amount"],
    [{ amount: 1.5 }, "amount"],
    [{ amount: "100" }, "amount"],
    [{ amount: 1e12 }, "amount"],
    [{ amout: 100 }, ""],
    [{ orderId: randomUUID() }, ""],
    [[100], ""],
  ])("refuses the body %j with 400, naming the field, and refunds nothing", async (body, path) => {
    const order = await paidOrder();
    const { response, json } = await postRefund({ token: account.token, orderId: order.id, body });

    expect(response.status).toBe(400);
    const problem = json() as { type: string; errors: { path: string }[] };
    expect(problem.type).toBe("/problems/invalid-body");
    expect(problem.errors.map((error) => error.path)).toContain(path);
    expect((await refundsOfOrder(order.id)).refundedAmount).toBe(0);
  });

  it("answers 422 when the key is sent again with another amount, or for another order", async () => {
    const [order, other] = await Promise.all([paidOrder(), paidOrder()]);
    const key = randomUUID();
    await postRefund({ token: account.token, orderId: order.id, key, body: { amount: 100 } });

    for (const [orderId, amount] of [
      [order.id, 200],
      [other.id, 100],
    ] as const) {
      const { response, json } = await postRefund({
        token: account.token,
        orderId,
        key,
        body: { amount },
      });
      expect(response.status).toBe(422);
      expect(json()).toMatchObject({ type: "/problems/idempotency-key-reused" });
    }
    expect(await refundedAtProvider(order)).toEqual([100]);
    expect(await refundedAtProvider(other)).toEqual([]);
  });

  it("resumes under the same key after the attempt failed once the provider had refunded: one refund", async () => {
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
    expect(await keyRow(account.id, key)).toMatchObject({
      state: "in_flight",
      recovery_point: "refund_started",
    });
    await expireLease(account.id, key);

    const retried = await postRefund({
      token: account.token,
      orderId: order.id,
      key,
      body: { amount: 300 },
    });
    expect(retried.response.status).toBe(201);
    expect(await refundedAtProvider(order)).toEqual([300]);
    expect(await refundsOfOrder(order.id)).toMatchObject({
      refunds: [{ status: "succeeded", amount: 300 }],
      refundedAmount: 300,
    });
  });
});

describe("a refund nobody retries", () => {
  it("is finished by the recovery worker from the request its key keeps: one refund, recorded", async () => {
    const order = await paidOrder();
    const key = randomUUID();
    const failed = await postRefund({
      token: account.token,
      orderId: order.id,
      key,
      body: { amount: 400 },
      headers: { "OncePay-Fault": "after-charge" },
    });
    expect(failed.response.status).toBe(500);
    await expireLease(account.id, key);

    // Another instance of the app, in effect, running its recovery worker.
    const report = await shopEngineOn(testDb(), provider()).recover({
      batchSize: 1000,
      concurrency: 4,
    });

    expect(report.completed).toBeGreaterThanOrEqual(1);
    expect(await keyRow(account.id, key)).toMatchObject({
      state: "complete",
      response_status: 201,
    });
    expect(await refundedAtProvider(order)).toEqual([400]);
    expect(await refundsOfOrder(order.id)).toMatchObject({
      refunds: [{ status: "succeeded", amount: 400 }],
      refundedAmount: 400,
    });
    const replay = await postRefund({
      token: account.token,
      orderId: order.id,
      key,
      body: { amount: 400 },
    });
    expect(replay.response.status).toBe(201);
    expect(replay.response.headers.get("idempotent-replayed")).toBe("true");
  });
});

describe("refunds in flight at once", () => {
  itOnServer(
    "concurrency",
    "N refunds of one order under N keys, all at once: the sum refunded is at most the charge, the rest get 422, and the provider holds exactly the recorded ones",
    async () => {
      const order = await paidOrder();
      const each = 1200; // 5050 holds four of them, not five
      const keys = Array.from({ length: 12 }, () => randomUUID());
      const answers = await Promise.all(
        keys.map((key) =>
          postRefund({ token: account.token, orderId: order.id, key, body: { amount: each } }),
        ),
      );
      const statuses = answers.map((answer) => answer.response.status).sort();
      const refunded = Math.floor(order.amount / each);
      console.info(
        `[refund race] ${keys.length} refunds of ${each} of an order of ${order.amount} at once: ${statuses.join(" ")}`,
      );

      expect(statuses).toEqual([
        ...Array<number>(refunded).fill(201),
        ...Array<number>(keys.length - refunded).fill(422),
      ]);
      for (const answer of answers.filter((answer) => answer.response.status === 422))
        expect(answer.json()).toMatchObject({
          type: "/problems/refund-exceeds-balance",
        });
      const recorded = await refundsOfOrder(order.id);
      expect(recorded.refunds.map((refund) => refund.status)).toEqual(
        Array<string>(refunded).fill("succeeded"),
      );
      expect(recorded.refundedAmount).toBe(refunded * each);
      expect(await refundedAtProvider(order)).toEqual(Array<number>(refunded).fill(each));
    },
  );

  itOnServer(
    "concurrency",
    "N identical refunds under one key, all at once: one refund, the rest 409 or its replay",
    async () => {
      const order = await paidOrder();
      const key = randomUUID();
      const answers = await Promise.all(
        Array.from({ length: 20 }, () =>
          postRefund({ token: account.token, orderId: order.id, key, body: { amount: 500 } }),
        ),
      );
      const statuses = answers.map((answer) => answer.response.status);

      expect(statuses.filter((status) => status !== 201 && status !== 409)).toEqual([]);
      expect(statuses).toContain(201);
      expect(await refundedAtProvider(order)).toEqual([500]);
      expect((await refundsOfOrder(order.id)).refundedAmount).toBe(500);
    },
  );

  itOnServer(
    "concurrency",
    "N identical refunds under one key with Prefer: wait=10, all at once: one refund, and every answer its 201",
    async () => {
      const order = await paidOrder();
      const key = randomUUID();
      const answers = await Promise.all(
        Array.from({ length: 20 }, () =>
          postRefund({
            token: account.token,
            orderId: order.id,
            key,
            body: { amount: 500 },
            headers: { Prefer: "wait=10" },
          }),
        ),
      );
      expect(answers.map((answer) => answer.response.status)).toEqual(answers.map(() => 201));
      expect(new Set(answers.map((answer) => answer.text)).size).toBe(1);
      expect(
        answers.filter((answer) => answer.response.headers.get("idempotent-replayed") === "true"),
      ).toHaveLength(19);
      expect(await refundedAtProvider(order)).toEqual([500]);
      expect((await refundsOfOrder(order.id)).refundedAmount).toBe(500);
    },
  );
});
