import { randomUUID } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { baseUrl, cartBody, createAccount, postOrder } from "@/lib/testing/api-client";
import { postUnsafeOrder } from "@/lib/testing/api-client-demo";
import { closeTestDb } from "@/lib/testing/database";

/**
 * GET /api/purchases/{cartId}: one cart's orders and the charges the payment
 * provider holds for them, counted from its records. What the shop leads
 * with after a payment, so each verdict is checked against what was really
 * sent: one keyed checkout retried (one charge), one cart paid twice
 * without a key (two), and nothing of another account's.
 */
afterAll(closeTestDb);

async function purchase(token: string, cartId: string) {
  const response = await fetch(`${baseUrl()}/api/purchases/${encodeURIComponent(cartId)}`, {
    headers: { Authorization: `Bearer ${token}` },
  });
  return { status: response.status, body: await response.json(), headers: response.headers };
}

describe("GET /api/purchases/{cartId}", () => {
  it("counts a keyed checkout retried three times as one order and one charge", async () => {
    const { token } = await createAccount();
    const body = cartBody();
    const key = randomUUID();
    let total = 0;
    for (let attempt = 0; attempt < 3; attempt++) {
      const paid = await postOrder({ token, key, body });
      expect(paid.response.status).toBe(201);
      total = JSON.parse(paid.text).amount;
    }

    const answer = await purchase(token, body.cartId);
    expect(answer.status).toBe(200);
    expect(answer.headers.get("cache-control")).toBe("private, no-store");
    expect(answer.body).toMatchObject({
      object: "purchase",
      cartId: body.cartId,
      charges: { counted: true, charges: 1, amountCharged: total, currency: "usd" },
      verdict: "charged-once",
    });
    expect(answer.body.orders).toHaveLength(1);
    expect(answer.body.orders[0]).toMatchObject({ idempotencyKey: key, cartId: body.cartId });
  });

  it("counts one cart paid twice without a key as two orders and two charges", async () => {
    const { token } = await createAccount();
    const body = cartBody();
    const ids: string[] = [];
    let total = 0;
    for (let attempt = 0; attempt < 2; attempt++) {
      const paid = await postUnsafeOrder({ token, body });
      expect(paid.status).toBe(201);
      const order = await paid.json();
      ids.push(order.id);
      total = order.amount;
    }
    expect(total).toBeGreaterThan(0);

    const answer = await purchase(token, body.cartId);
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      charges: { counted: true, charges: 2, amountCharged: 2 * total },
      verdict: "charged-more-than-once",
    });
    // Newest first.
    expect(answer.body.orders.map((order: { id: string }) => order.id)).toEqual(ids.reverse());
  });

  it("knows no cart this account never paid for, nor another account's: the same 404", async () => {
    const [mine, theirs] = await Promise.all([createAccount(), createAccount()]);
    const body = cartBody();
    expect(
      (await postOrder({ token: theirs.token, key: randomUUID(), body })).response.status,
    ).toBe(201);
    for (const cartId of [body.cartId, `cart-${randomUUID()}`, "x".repeat(101)]) {
      const answer = await purchase(mine.token, cartId);
      expect(answer.status).toBe(404);
      expect(answer.body.type).toBe("/problems/purchase-not-found");
    }
  });

  it("needs credentials", async () => {
    const response = await fetch(`${baseUrl()}/api/purchases/cart-1`);
    expect(response.status).toBe(401);
  });
});
