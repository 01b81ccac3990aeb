import { randomUUID } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { fingerprintRequest } from "@/lib/idempotency/fingerprint";
import { PostgresIdempotencyStore } from "@/lib/idempotency/postgres-store";
import { LeaseLostError, type Claim, type ClaimRequest } from "@/lib/idempotency/store";
import { postgresRateLimit } from "@/lib/limits/rate-limit";
import { parseCheckoutRequest } from "@/lib/orders/cart";
import { chargeWrite } from "@/lib/orders/record";
import { createAccount } from "@/lib/testing/api-client";
import { closeTestDb, expireKey, expireLease, keyRow, testDb } from "@/lib/testing/database";

/**
 * The store's rules about time, on the database under test: how long an
 * attempt holds a key, and when an old key may be started afresh.
 */
afterAll(closeTestDb);

const LEASE_SECONDS = 30;
const store = () =>
  new PostgresIdempotencyStore(testDb(), { leaseSeconds: LEASE_SECONDS, ttlSeconds: 24 * 60 * 60 });

async function claimFresh(
  accountId: string,
  key = randomUUID(),
): Promise<{ request: ClaimRequest; claim: Claim }> {
  const request: ClaimRequest = {
    accountId,
    key,
    method: "POST",
    path: "/api/orders",
    fingerprint: "f".repeat(64),
    body: { cartId: "c" },
  };
  const result = await store().claimKey(request);
  if (result.kind !== "claimed") throw new Error(`expected a claim, got ${result.kind}`);
  return { request, claim: result.claim };
}

/** Pretends the attempt spent most of its lease before getting to the charge. */
async function leaveSecondsOfLease(accountId: string, key: string, seconds: number) {
  await testDb().query(
    `UPDATE idempotency_keys SET lease_expires_at = now() + make_interval(secs => $3) WHERE account_id = $1 AND idem_key = $2`,
    [accountId, key, seconds],
  );
}

describe("the lease", () => {
  it("is renewed when the side effect begins, so the charge gets a whole lease however long the attempt took to get there", async () => {
    const shopper = await createAccount();
    const { request, claim } = await claimFresh(shopper.id);
    await leaveSecondsOfLease(shopper.id, request.key, 1);

    await store().markSideEffectStarted(claim, { total: 1800 });

    const row = await keyRow(shopper.id, request.key);
    expect(row).toMatchObject({
      recovery_point: "payment_started",
      side_effect_request: { total: 1800 },
    });
    expect(row!.lease_expires_at!.getTime() - Date.now()).toBeGreaterThan(
      (LEASE_SECONDS - 5) * 1000,
    );
  });
});

describe("a claim over a key past its TTL", () => {
  it("starts a complete key afresh, as a new row", async () => {
    const shopper = await createAccount();
    const { request, claim } = await claimFresh(shopper.id);
    await store().completeKey(claim, {
      response: { status: 201, headers: {}, body: { ok: true } },
    });
    await expireKey(shopper.id, request.key);

    const again = await store().claimKey(request);
    expect(again).toMatchObject({
      kind: "claimed",
      claim: { recoveryPoint: "claimed", tookOver: false },
    });
    expect(again.kind === "claimed" && again.claim.keyId).not.toBe(claim.keyId);
  });

  it("takes over, rather than deletes, an abandoned key whose payment began: the same row, so the same provider key and no second charge", async () => {
    const shopper = await createAccount();
    const { request, claim } = await claimFresh(shopper.id);
    await store().markSideEffectStarted(claim, { total: 1800 });
    await expireKey(shopper.id, request.key);
    await expireLease(shopper.id, request.key);

    const again = await store().claimKey(request);
    expect(again).toMatchObject({
      kind: "claimed",
      claim: {
        keyId: claim.keyId,
        recoveryPoint: "payment_started",
        tookOver: true,
        sideEffectRequest: { total: 1800 },
      },
    });
  });

  it("answers 409 while the attempt that holds it is still running, and leaves it alone", async () => {
    const shopper = await createAccount();
    const { request, claim } = await claimFresh(shopper.id);
    await expireKey(shopper.id, request.key);

    expect(await store().claimKey(request)).toMatchObject({ kind: "in-flight" });
    expect(await keyRow(shopper.id, request.key)).toMatchObject({
      id: claim.keyId,
      state: "in_flight",
    });
  });
});

describe("a key sent to another endpoint", () => {
  it("is refused as a mismatch (422), even with the same body: the fingerprint covers the method and path", async () => {
    const shopper = await createAccount();
    const key = randomUUID();
    const body = { cartId: "c", items: [{ sku: "mug-ceramic-350", quantity: 1 }] };
    const at = (method: string, path: string): ClaimRequest => ({
      accountId: shopper.id,
      key,
      method,
      path,
      fingerprint: fingerprintRequest(method, path, body),
      body,
    });
    const first = await store().claimKey(at("POST", "/api/orders"));
    if (first.kind !== "claimed") throw new Error(`expected a claim, got ${first.kind}`);
    await store().completeKey(first.claim, {
      response: { status: 201, headers: {}, body: { ok: true } },
    });

    expect(await store().claimKey(at("POST", "/api/refunds"))).toEqual({
      kind: "fingerprint-mismatch",
    });
    expect(await store().claimKey(at("PATCH", "/api/orders"))).toEqual({
      kind: "fingerprint-mismatch",
    });
    expect(await store().claimKey(at("POST", "/api/orders"))).toMatchObject({
      kind: "replay",
      stored: { status: 201 },
    });
  });
});

describe("the completion", () => {
  function orderFor(accountId: string, claim: Claim) {
    const parsed = parseCheckoutRequest({
      cartId: `cart-${randomUUID()}`,
      items: [{ sku: "mug-ceramic-350", quantity: 1 }],
    });
    if (!parsed.ok) throw new Error(parsed.detail);
    return chargeWrite({
      accountId,
      keyId: claim.keyId,
      idempotencyKey: "k",
      source: "checkout",
      providerKey: `pk-${claim.keyId}`,
      cart: parsed.body,
      charge: { status: "succeeded", providerPaymentId: `pi_${randomUUID()}` },
      provider: "simulator",
    });
  }
  const ordersOf = async (accountId: string) =>
    (
      await testDb().query(
        `SELECT (SELECT count(*) FROM orders WHERE account_id = $1)::int AS orders, (SELECT count(*) FROM payments WHERE account_id = $1)::int AS payments`,
        [accountId],
      )
    ).rows[0];

  it("writes the order with its items and payment and completes the key, in one statement", async () => {
    const shopper = await createAccount();
    const { request, claim } = await claimFresh(shopper.id);
    const write = orderFor(shopper.id, claim);

    await store().completeKey(claim, write);

    expect(await ordersOf(shopper.id)).toEqual({ orders: 1, payments: 1 });
    const items = await testDb().query(
      `SELECT count(*)::int AS n FROM order_items WHERE order_id = $1`,
      [(write.response.body as { id: string }).id],
    );
    expect(items.rows[0]).toEqual({ n: 1 });
    expect(await keyRow(shopper.id, request.key)).toMatchObject({
      state: "complete",
      response_status: 201,
      response_body: write.response.body,
    });
  });

  it("writes nothing, neither the order nor the key, once another attempt has taken the key over", async () => {
    const shopper = await createAccount();
    const { request, claim } = await claimFresh(shopper.id);
    await expireLease(shopper.id, request.key);
    expect(await store().takeOverKey(claim.keyId)).toBeDefined();

    await expect(store().completeKey(claim, orderFor(shopper.id, claim))).rejects.toBeInstanceOf(
      LeaseLostError,
    );

    expect(await ordersOf(shopper.id)).toEqual({ orders: 0, payments: 0 });
    expect(await keyRow(shopper.id, request.key)).toMatchObject({
      state: "in_flight",
      response_status: null,
    });
  });
});

describe("the question asked alongside the first look (the checkout's admission)", () => {
  // A rate limit's count: what it wrote shows whether the question was asked.
  const limit = postgresRateLimit(testDb(), {
    name: "test_alongside",
    points: 10,
    windowSeconds: 60,
  });
  const counted = async (accountId: string) =>
    (
      await testDb().query<{ points: number }>(`SELECT points FROM rate_limits WHERE key = $1`, [
        `test_alongside:${accountId}`,
      ])
    ).rows[0]?.points ?? 0;
  const requestFor = (accountId: string, key = randomUUID()): ClaimRequest => ({
    accountId,
    key,
    method: "POST",
    path: "/api/orders",
    fingerprint: "f".repeat(64),
    body: { cartId: "c" },
  });

  it("is asked in the statement that claims the key, and answers with the claim", async () => {
    const shopper = await createAccount();
    const question = limit.count(shopper.id);

    const first = await store().lookUpOrClaim(requestFor(shopper.id), question);

    expect(first).toMatchObject({ kind: "claimed" });
    expect(question.read((first as { answer: unknown }).answer)).toEqual({ allowed: true });
    expect(await counted(shopper.id)).toBe(1);
  });

  it("is not asked when the key's row answers (a replay, a 409): nothing is counted", async () => {
    const shopper = await createAccount();
    const { request, claim } = await claimFresh(shopper.id);
    expect(await store().lookUpOrClaim(request, limit.count(shopper.id))).toEqual({
      kind: "in-flight",
    });
    await store().completeKey(claim, { response: { status: 201, headers: {}, body: { id: "o" } } });
    expect(await store().lookUpOrClaim(request, limit.count(shopper.id))).toMatchObject({
      kind: "replay",
    });

    expect(await counted(shopper.id)).toBe(0);
  });

  it("can be asked by itself, for a key claimKey claims", async () => {
    const shopper = await createAccount();
    const question = limit.count(shopper.id);
    expect(question.read(await store().ask(question))).toEqual({ allowed: true });
    expect(await counted(shopper.id)).toBe(1);
  });
});
