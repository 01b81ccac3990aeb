import { randomUUID } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { baseUrl, cartBody, createAccount, postOrder } from "@/lib/testing/api-client";
import {
  HOLD_WHILE_OTHERS_ARRIVE_MS,
  postUnsafeOrder,
  setDemoSettings,
} from "@/lib/testing/api-client-demo";
import { closeTestDb, countRows, keyRow } from "@/lib/testing/database";

/**
 * The demo faults over real HTTP: each is switched on per account and makes
 * the server fail the way the demos need. The test server runs with
 * DEMO_FAULTS=on.
 */
afterAll(closeTestDb);

async function getSettings(token: string) {
  const response = await fetch(`${baseUrl()}/api/demo/settings`, {
    headers: { Authorization: `Bearer ${token}` },
  });
  return { status: response.status, body: await response.json() };
}

describe("demo settings", () => {
  it("start with every fault off, and are saved per account", async () => {
    const mine = await createAccount();
    const theirs = await createAccount();
    expect(await getSettings(mine.token)).toEqual({
      status: 200,
      body: { faultsEnabled: true, networkDelayMs: 0, loseResponse: false },
    });

    const saved = await setDemoSettings(mine.token, { networkDelayMs: 1500, loseResponse: true });
    expect(saved.status).toBe(200);
    expect((await getSettings(mine.token)).body).toEqual({
      faultsEnabled: true,
      networkDelayMs: 1500,
      loseResponse: true,
    });
    expect((await getSettings(theirs.token)).body).toEqual({
      faultsEnabled: true,
      networkDelayMs: 0,
      loseResponse: false,
    });
  });

  it("reject out-of-range values with a 400 that names the field", async () => {
    const account = await createAccount();
    const response = await setDemoSettings(account.token, {
      networkDelayMs: 60_000,
      loseResponse: false,
    });
    expect(response.status).toBe(400);
    expect((await response.json()).detail).toContain("networkDelayMs");
  });

  it("need credentials", async () => {
    const response = await fetch(`${baseUrl()}/api/demo/settings`);
    expect(response.status).toBe(401);
  });
});

describe("lost response", () => {
  it("commits the order and drops the connection once; the retry with the same key gets the replay", async () => {
    const shopper = await createAccount();
    await setDemoSettings(shopper.token, { networkDelayMs: 0, loseResponse: true });
    const key = randomUUID();
    const body = cartBody();

    await expect(postOrder({ token: shopper.token, key, body })).rejects.toThrow(TypeError);
    expect(await countRows("orders", shopper.id)).toBe(1);

    const retry = await postOrder({ token: shopper.token, key, body });
    expect(retry.response.status).toBe(201);
    expect(retry.response.headers.get("idempotent-replayed")).toBe("true");
    expect(await countRows("orders", shopper.id)).toBe(1);
    expect((await getSettings(shopper.token)).body.loseResponse).toBe(false);
  });
});

describe("slow network", () => {
  it("holds the first attempt; an overlapping retry gets 409, a later one the replay", async () => {
    const shopper = await createAccount();
    await setDemoSettings(shopper.token, {
      networkDelayMs: HOLD_WHILE_OTHERS_ARRIVE_MS,
      loseResponse: false,
    });
    const key = randomUUID();
    const body = cartBody();

    const first = postOrder({ token: shopper.token, key, body });
    // The first attempt has claimed the key (its claim records the payment's
    // start) and is being held before the charge.
    await expect
      .poll(() => keyRow(shopper.id, key))
      .toMatchObject({
        state: "in_flight",
        recovery_point: "payment_started",
        response_status: null,
      });
    const overlapping = await postOrder({ token: shopper.token, key, body });
    expect(overlapping.response.status).toBe(409);
    expect(overlapping.response.headers.get("retry-after")).toBe("1");

    const firstResult = await first;
    expect(firstResult.response.status).toBe(201);
    const later = await postOrder({ token: shopper.token, key, body });
    expect(later.response.headers.get("idempotent-replayed")).toBe("true");
    expect(later.text).toBe(firstResult.text);
    expect(await countRows("orders", shopper.id)).toBe(1);
  });
});

describe("the lab's keyless checkout (broken on purpose)", () => {
  it("charges twice when a lost response is retried", async () => {
    const shopper = await createAccount();
    await setDemoSettings(shopper.token, { networkDelayMs: 0, loseResponse: true });
    const send = () =>
      postUnsafeOrder({ token: shopper.token, body: cartBody({ cartId: "same-cart" }) });

    // The headers arrive, then the body breaks off: the answer is lost.
    await expect(send().then((response) => response.text())).rejects.toThrow(TypeError);
    const retry = await send();
    expect(retry.status).toBe(201);
    expect(await countRows("orders", shopper.id)).toBe(2);
    expect(await countRows("payments", shopper.id)).toBe(2);
  });

  it("answers with the same problems as every endpoint: 401 with a challenge, 400 naming the field", async () => {
    const unauthenticated = await postUnsafeOrder({ body: cartBody() });
    expect(unauthenticated.status).toBe(401);
    expect(unauthenticated.headers.get("www-authenticate")).toMatch(/^Bearer /);
    expect(await unauthenticated.json()).toMatchObject({
      type: "/problems/unauthenticated",
      status: 401,
    });

    const shopper = await createAccount();
    const invalid = await postUnsafeOrder({
      token: shopper.token,
      body: cartBody({ items: [{ sku: "mug-ceramic-350", quantity: 0 }] }),
    });
    expect(invalid.status).toBe(400);
    expect(invalid.headers.get("content-type")).toBe("application/problem+json");
    const problem = await invalid.json();
    expect(problem).toMatchObject({ type: "/problems/invalid-body", status: 400 });
    expect(problem.errors.map((error: { path: string }) => error.path)).toContain(
      "items.0.quantity",
    );
    expect(await countRows("payments", shopper.id)).toBe(0);
  });

  it("answers a declined card with a 402 problem+json, as the real endpoint does", async () => {
    const shopper = await createAccount();
    const declined = await postUnsafeOrder({
      token: shopper.token,
      body: cartBody({ paymentMethod: "pm_card_chargeDeclined" }),
    });
    expect(declined.status).toBe(402);
    expect(declined.headers.get("content-type")).toBe("application/problem+json");
    expect(await declined.json()).toMatchObject({
      type: "/problems/payment-declined",
      declineCode: "generic_decline",
    });
    expect(await countRows("orders", shopper.id)).toBe(0);
    expect(await countRows("payments", shopper.id)).toBe(1);
  });
});
