import { randomUUID } from "node:crypto";
import pg from "pg";
import { PrismaPg } from "@prisma/adapter-pg";
import { afterAll, describe, expect, inject, it } from "vitest";
import { PrismaClient } from "@/lib/generated/prisma/client";
import { fingerprintRequest } from "@oncepay/idempotency";
import { PrismaIdempotencyStore } from "@/lib/idempotency/prisma-store";
import { SqlIdempotencyStore } from "@/lib/idempotency/sql-store";
import {
  ChargeAlreadyRecordedError,
  LeaseLostError,
  type Claim,
  type ClaimRequest,
  type IdempotencyStore,
} from "@/lib/idempotency/store";
import { parseCheckoutRequest } from "@/lib/orders/cart";
import { chargeWrite } from "@/lib/orders/record";
import type { ChargeResult } from "@/lib/payments/provider";
import { createAccount } from "@/lib/testing/api-client";
import {
  closeTestDb,
  expireKey,
  expireLease,
  keyRow,
  rowCounts,
  testDb,
  testPrisma,
} from "@/lib/testing/database";
import { itOnServer } from "@/lib/testing/postgres-server-only";

/**
 * The contract every idempotency store keeps, run against both stores on
 * the database under test: one winner among concurrent claims, the replay,
 * the 409 and the 422, the lease and its takeover at every recovery point,
 * the TTL, and a completion that writes the key and the order together or
 * nothing at all.
 */
afterAll(closeTestDb);

const LEASE_SECONDS = 30;
const TIMINGS = { leaseSeconds: LEASE_SECONDS, ttlSeconds: 24 * 60 * 60 };

const STORES: { name: string; open: () => IdempotencyStore }[] = [
  { name: "SqlIdempotencyStore", open: () => new SqlIdempotencyStore(testDb(), TIMINGS) },
  { name: "PrismaIdempotencyStore", open: () => new PrismaIdempotencyStore(testPrisma(), TIMINGS) },
];

const CART = { cartId: "cart-contract", items: [{ sku: "mug-ceramic-350", quantity: 2 }] };

function claimRequest(accountId: string, key = randomUUID(), body: unknown = CART): ClaimRequest {
  return {
    accountId,
    key,
    method: "POST",
    path: "/api/orders",
    fingerprint: fingerprintRequest("POST", "/api/orders", body),
    body,
  };
}

function checkoutWrite(accountId: string, claim: Claim, charge: ChargeResult) {
  const parsed = parseCheckoutRequest({ ...CART, cartId: `cart-${randomUUID()}` });
  if (!parsed.ok) throw new Error(parsed.detail);
  return chargeWrite({
    accountId,
    keyId: claim.keyId,
    idempotencyKey: "k",
    source: "checkout",
    providerKey: `pk-${claim.keyId}`,
    cart: parsed.body,
    charge,
    provider: "simulator",
  });
}

const SUCCEEDED: ChargeResult = { status: "succeeded", providerPaymentId: "pi_contract" };

/** A succeeded charge with a payment id of its own: the database records each provider payment once. */
function succeeded(): ChargeResult {
  return { status: "succeeded", providerPaymentId: `pi_${randomUUID().replaceAll("-", "")}` };
}

describe.each(STORES)("$name", ({ open }) => {
  const store = open;

  async function claimFresh(accountId: string, key = randomUUID()) {
    const request = claimRequest(accountId, key);
    const result = await store().claimKey(request);
    if (result.kind !== "claimed") throw new Error(`expected a claim, got ${result.kind}`);
    return { request, claim: result.claim };
  }

  describe("the claim", () => {
    it("claims a new key at `claimed`, and stores the request to resume it", async () => {
      const shopper = await createAccount();
      const { request, claim } = await claimFresh(shopper.id);
      expect(claim).toMatchObject({ recoveryPoint: "claimed", tookOver: false });
      expect(await keyRow(shopper.id, request.key)).toMatchObject({
        id: claim.keyId,
        state: "in_flight",
        recovery_point: "claimed",
      });
      expect(await store().findAbandonedKeys(1000)).not.toContainEqual(
        expect.objectContaining({ keyId: claim.keyId }),
      );
    });

    it("answers 409 (in flight) while another attempt holds the key", async () => {
      const shopper = await createAccount();
      const { request } = await claimFresh(shopper.id);
      expect(await store().claimKey(request)).toEqual({ kind: "in-flight" });
    });

    it("replays the stored response of a completed key, writing nothing", async () => {
      const shopper = await createAccount();
      const { request, claim } = await claimFresh(shopper.id);
      const write = checkoutWrite(shopper.id, claim, succeeded());
      await store().completeKey(claim, write);

      expect(await store().claimKey(request)).toEqual({ kind: "replay", stored: write.response });
      expect(await rowCounts(shopper.id)).toEqual({ orders: 1, payments: 1 });
    });

    it("refuses another request under the same key (422), even with the same body at another method or path", async () => {
      const shopper = await createAccount();
      const { request, claim } = await claimFresh(shopper.id);
      await store().completeKey(claim, checkoutWrite(shopper.id, claim, succeeded()));
      const other = (method: string, path: string, body: unknown = CART): ClaimRequest => ({
        ...request,
        method,
        path,
        fingerprint: fingerprintRequest(method, path, body),
      });

      expect(
        await store().claimKey(other("POST", "/api/orders", { ...CART, cartId: "x" })),
      ).toEqual({
        kind: "fingerprint-mismatch",
      });
      expect(await store().claimKey(other("POST", "/api/refunds"))).toEqual({
        kind: "fingerprint-mismatch",
      });
      expect(await store().claimKey(other("PATCH", "/api/orders"))).toEqual({
        kind: "fingerprint-mismatch",
      });
    });

    it("lets a key released by its attempt be claimed afresh, as a new row", async () => {
      const shopper = await createAccount();
      const { request, claim } = await claimFresh(shopper.id);
      await store().releaseKey(claim);
      expect(await keyRow(shopper.id, request.key)).toBeUndefined();

      const again = await store().claimKey(request);
      expect(again).toMatchObject({ kind: "claimed", claim: { tookOver: false } });
    });

    itOnServer("concurrency", "has one winner among 50 concurrent claims of one key", async () => {
      const shopper = await createAccount();
      const request = claimRequest(shopper.id);
      // Connections of their own, so all 50 claims are at the database at once.
      const pool = new pg.Pool({ connectionString: inject("databaseUrl"), max: 50 });
      const prisma = new PrismaClient({
        adapter: new PrismaPg({ connectionString: inject("databaseUrl"), max: 50 }),
      });
      try {
        const racer =
          store() instanceof SqlIdempotencyStore
            ? new SqlIdempotencyStore(pool, TIMINGS)
            : new PrismaIdempotencyStore(prisma, TIMINGS);
        const results = await Promise.all(
          Array.from({ length: 50 }, () => racer.claimKey(request)),
        );
        const kinds = results.map((result) => result.kind);
        expect(kinds.filter((kind) => kind === "claimed")).toHaveLength(1);
        expect(kinds.filter((kind) => kind === "in-flight")).toHaveLength(49);
      } finally {
        await pool.end();
        await prisma.$disconnect();
      }
    });
  });

  describe("the recovery points", () => {
    it("records payment_started durably with the payment request, and renews the lease for the charge", async () => {
      const shopper = await createAccount();
      const { request, claim } = await claimFresh(shopper.id);
      await testDb().query(
        `UPDATE idempotency_keys SET lease_expires_at = now() + interval '1 second' WHERE id = $1`,
        [claim.keyId],
      );

      await store().markPaymentStarted(claim, { total: 1800 });

      expect(claim).toMatchObject({
        recoveryPoint: "payment_started",
        paymentRequest: { total: 1800 },
      });
      expect(claim.paymentStartedAt).toBeInstanceOf(Date);
      const row = await keyRow(shopper.id, request.key);
      expect(row).toMatchObject({
        recovery_point: "payment_started",
        payment_request: { total: 1800 },
      });
      expect(row!.lease_expires_at!.getTime() - Date.now()).toBeGreaterThan(
        (LEASE_SECONDS - 5) * 1000,
      );
    });

    it("records charged with the provider's answer, then finished with the order, in one commit", async () => {
      const shopper = await createAccount();
      const { request, claim } = await claimFresh(shopper.id);
      const charge = succeeded();
      await store().markPaymentStarted(claim, { total: 1800 });
      await store().recordCharge(claim, charge);
      expect(await keyRow(shopper.id, request.key)).toMatchObject({
        recovery_point: "charged",
        charge_result: charge,
      });

      const write = checkoutWrite(shopper.id, claim, charge);
      await store().completeKey(claim, write);

      expect(await keyRow(shopper.id, request.key)).toMatchObject({
        state: "complete",
        recovery_point: "finished",
        response_status: 201,
        response_body: write.response.body,
      });
      expect(await rowCounts(shopper.id)).toEqual({ orders: 1, payments: 1 });
      const items = await testDb().query<{ quantity: number }>(
        `SELECT quantity FROM order_items WHERE order_id = $1`,
        [(write.response.body as { id: string }).id],
      );
      expect(items.rows).toEqual([{ quantity: 2 }]);
    });

    it("writes a decline as a payment without an order", async () => {
      const shopper = await createAccount();
      const { claim } = await claimFresh(shopper.id);
      const declined: ChargeResult = {
        status: "declined",
        providerPaymentId: `pi_declined_${randomUUID()}`,
        declineCode: "card_declined",
        message: "Your card was declined.",
      };
      await store().completeKey(claim, checkoutWrite(shopper.id, claim, declined));
      expect(await rowCounts(shopper.id)).toEqual({ orders: 0, payments: 1 });
    });

    it("moves a started payment on to the next provider key, durably, restarting its clock; a takeover resumes there", async () => {
      const shopper = await createAccount();
      const { request, claim } = await claimFresh(shopper.id);
      expect(claim.providerKeyGeneration).toBe(0);
      await store().markPaymentStarted(claim, { total: 1800 });
      const firstStart = claim.paymentStartedAt!;

      await store().startNextProviderKey(claim);

      expect(claim.providerKeyGeneration).toBe(1);
      expect(claim.paymentStartedAt!.getTime()).toBeGreaterThanOrEqual(firstStart.getTime());
      expect(await keyRow(shopper.id, request.key)).toMatchObject({
        recovery_point: "payment_started",
        provider_key_generation: 1,
      });
      await expireLease(shopper.id, request.key);
      const stale = { ...claim };
      expect(await store().claimKey(request)).toMatchObject({
        kind: "claimed",
        claim: {
          keyId: claim.keyId,
          providerKeyGeneration: 1,
          paymentStartedAt: claim.paymentStartedAt,
        },
      });
      await expect(store().startNextProviderKey(stale)).rejects.toBeInstanceOf(LeaseLostError);
    });

    it("records one provider payment once: a second key answered with it writes nothing and stays ours, to complete with a refusal", async () => {
      const shopper = await createAccount();
      const charge = succeeded();
      const first = await claimFresh(shopper.id);
      await store().completeKey(first.claim, checkoutWrite(shopper.id, first.claim, charge));
      const second = await claimFresh(shopper.id);

      await expect(
        store().completeKey(second.claim, checkoutWrite(shopper.id, second.claim, charge)),
      ).rejects.toBeInstanceOf(ChargeAlreadyRecordedError);
      expect(await rowCounts(shopper.id)).toEqual({ orders: 1, payments: 1 });
      expect(await keyRow(shopper.id, second.request.key)).toMatchObject({ state: "in_flight" });

      const refusal = { status: 422, headers: {}, body: { title: "refused" } };
      await store().completeKey(second.claim, { response: refusal });
      expect(await store().claimKey(second.request)).toEqual({ kind: "replay", stored: refusal });
    });
  });

  describe("the lease", () => {
    it.each([
      { point: "claimed", expected: { recoveryPoint: "claimed" } },
      {
        point: "payment_started",
        expected: { recoveryPoint: "payment_started", paymentRequest: { total: 1800 } },
      },
      {
        point: "charged",
        expected: {
          recoveryPoint: "charged",
          paymentRequest: { total: 1800 },
          chargeResult: SUCCEEDED,
        },
      },
    ])(
      "is taken over once it runs out at $point, with what a resume needs",
      async ({ point, expected }) => {
        const shopper = await createAccount();
        const { request, claim } = await claimFresh(shopper.id);
        if (point !== "claimed") await store().markPaymentStarted(claim, { total: 1800 });
        if (point === "charged") await store().recordCharge(claim, SUCCEEDED);
        await expireLease(shopper.id, request.key);

        const again = await store().claimKey(request);

        expect(again).toMatchObject({
          kind: "claimed",
          claim: { keyId: claim.keyId, tookOver: true, ...expected },
        });
        if (point !== "claimed" && again.kind === "claimed") {
          expect(again.claim.paymentStartedAt).toBeInstanceOf(Date);
        }
      },
    );

    it("lists a key whose lease ran out for the recovery worker, and lets exactly one of two workers take it", async () => {
      const shopper = await createAccount();
      const { request, claim } = await claimFresh(shopper.id);
      await expireLease(shopper.id, request.key);

      expect(await store().findAbandonedKeys(10_000)).toContainEqual(
        expect.objectContaining({
          keyId: claim.keyId,
          accountId: shopper.id,
          idempotencyKey: request.key,
        }),
      );
      const takers = await Promise.all([
        store().takeOverKey(claim.keyId),
        store().takeOverKey(claim.keyId),
      ]);
      expect(takers.filter(Boolean)).toHaveLength(1);
    });

    it("leaves the old holder able to write nothing once the key is taken over: not the payment, the charge, nor the order", async () => {
      const shopper = await createAccount();
      const { request, claim } = await claimFresh(shopper.id);
      const stale = { ...claim };
      await expireLease(shopper.id, request.key);
      expect(await store().takeOverKey(claim.keyId)).toBeDefined();

      await expect(store().markPaymentStarted(stale, { total: 1 })).rejects.toBeInstanceOf(
        LeaseLostError,
      );
      await expect(store().recordCharge(stale, SUCCEEDED)).rejects.toBeInstanceOf(LeaseLostError);
      await expect(
        store().completeKey(stale, checkoutWrite(shopper.id, stale, SUCCEEDED)),
      ).rejects.toBeInstanceOf(LeaseLostError);
      await store().releaseKey(stale);

      expect(await rowCounts(shopper.id)).toEqual({ orders: 0, payments: 0 });
      expect(await keyRow(shopper.id, request.key)).toMatchObject({
        state: "in_flight",
        recovery_point: "claimed",
      });
    });

    it("ends at once when the attempt hands it back (endLease), so the next retry takes over without waiting", async () => {
      const shopper = await createAccount();
      const { request, claim } = await claimFresh(shopper.id);
      await store().markPaymentStarted(claim, { total: 1800 });
      await store().endLease(claim);

      expect(await store().claimKey(request)).toMatchObject({
        kind: "claimed",
        claim: { keyId: claim.keyId, tookOver: true, recoveryPoint: "payment_started" },
      });
    });
  });

  describe("the TTL", () => {
    it("starts a complete key past its TTL afresh, as a new row", async () => {
      const shopper = await createAccount();
      const { request, claim } = await claimFresh(shopper.id);
      await store().completeKey(claim, checkoutWrite(shopper.id, claim, succeeded()));
      await expireKey(shopper.id, request.key);

      const again = await store().claimKey(request);
      expect(again).toMatchObject({
        kind: "claimed",
        claim: { recoveryPoint: "claimed", tookOver: false },
      });
      expect(again.kind === "claimed" && again.claim.keyId).not.toBe(claim.keyId);
      expect(await rowCounts(shopper.id)).toEqual({ orders: 1, payments: 1 });
    });

    it("takes over, rather than deletes, an abandoned key whose payment started: the same row, so the same provider key", async () => {
      const shopper = await createAccount();
      const { request, claim } = await claimFresh(shopper.id);
      await store().markPaymentStarted(claim, { total: 1800 });
      await expireKey(shopper.id, request.key);
      await expireLease(shopper.id, request.key);

      expect(await store().claimKey(request)).toMatchObject({
        kind: "claimed",
        claim: { keyId: claim.keyId, recoveryPoint: "payment_started", tookOver: true },
      });
    });

    it("answers 409 for a key past its TTL whose attempt is still running, and leaves it alone", async () => {
      const shopper = await createAccount();
      const { request, claim } = await claimFresh(shopper.id);
      await expireKey(shopper.id, request.key);

      expect(await store().claimKey(request)).toEqual({ kind: "in-flight" });
      expect(await keyRow(shopper.id, request.key)).toMatchObject({
        id: claim.keyId,
        state: "in_flight",
      });
    });
  });
});
