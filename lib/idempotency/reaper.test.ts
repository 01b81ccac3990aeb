import { randomUUID } from "node:crypto";
import { pgStore } from "@oncepay/idempotency/pg";
import { afterAll, describe, expect, it } from "vitest";
import { reapExpiredKeys } from "@/lib/idempotency/reaper";
import { cartBody, createAccount, postOrder } from "@/lib/testing/api-client";
import { TEST_KEY_TIMINGS } from "@/lib/testing/shop-engine";
import {
  closeTestDb,
  countRows,
  expireKey,
  expireLease,
  keyRequestRowsOfKeyId,
  keyRequestsOf,
  keyRow,
  loseKey,
  testDb,
} from "@/lib/testing/database";
import { itOnServer } from "@/lib/testing/postgres-server-only";

afterAll(closeTestDb);

/** The engine's key store on the database under test: the reaper's, as the app builds it. */
function keys() {
  return pgStore(testDb(), { ...TEST_KEY_TIMINGS, statements: "unnamed" });
}

/**
 * Runs the reaper until it finds nothing more to delete: keys that other
 * tests left to expire (the soak's, with their one-minute TTL) may come
 * before this test's by expiry, and one run stops after its batches.
 */
async function reapUntilNothingIsLeft() {
  while ((await reapExpiredKeys(keys(), { batchSize: 1000, maxBatches: 10 })) > 0);
}

describe("the reaper", () => {
  it("deletes expired keys in bounded batches and keeps their orders", async () => {
    const shopper = await createAccount();
    const expired = Array.from({ length: 5 }, () => randomUUID());
    const live = randomUUID();
    for (const key of [...expired, live])
      expect((await postOrder({ token: shopper.token, key })).response.status).toBe(201);
    for (const key of expired) await expireKey(shopper.id, key);

    // A batch of 2, at most 2 batches: 4 of the 5 go in this run.
    const firstRun = await reapExpiredKeys(keys(), { batchSize: 2, maxBatches: 2 });
    expect(firstRun).toBeGreaterThanOrEqual(4);
    await reapUntilNothingIsLeft();

    for (const key of expired) expect(await keyRow(shopper.id, key)).toBeUndefined();
    expect(await keyRow(shopper.id, live)).toMatchObject({ state: "complete" });
    expect(await countRows("orders", shopper.id)).toBe(6);
    const { rows } = await testDb().query(
      `SELECT count(*)::int AS n FROM orders WHERE account_id = $1 AND idempotency_key_id IS NULL`,
      [shopper.id],
    );
    expect(rows[0].n).toBe(5);
  });

  it("deletes the requests recorded under an expired key with it", async () => {
    const shopper = await createAccount();
    const key = randomUUID();
    const body = cartBody();
    for (let sent = 0; sent < 3; sent++)
      expect((await postOrder({ token: shopper.token, key, body })).response.status).toBe(201);
    await expect.poll(async () => (await keyRequestsOf(shopper.id, key)).rows.length).toBe(3);
    const { id: keyId } = (await keyRow(shopper.id, key))!;
    // Three requests and the key's counter.
    expect(await keyRequestRowsOfKeyId(keyId)).toBe(4);

    await expireKey(shopper.id, key);
    await reapUntilNothingIsLeft();

    expect(await keyRow(shopper.id, key)).toBeUndefined();
    expect(await keyRequestRowsOfKeyId(keyId)).toBe(0);
  });

  it("starts the requests afresh when a key past its TTL is used again: the old key's go with its row", async () => {
    const shopper = await createAccount();
    const key = randomUUID();
    const body = cartBody();
    for (let sent = 0; sent < 2; sent++)
      expect((await postOrder({ token: shopper.token, key, body })).response.status).toBe(201);
    await expect.poll(async () => (await keyRequestsOf(shopper.id, key)).seen).toBe(2);
    const { id: oldKeyId } = (await keyRow(shopper.id, key))!;
    await expireKey(shopper.id, key);

    const again = await postOrder({ token: shopper.token, key, body: cartBody() });
    expect(again.response.status).toBe(201);
    expect(again.response.headers.get("idempotent-replayed")).toBeNull();

    expect(await keyRequestRowsOfKeyId(oldKeyId)).toBe(0);
    await expect.poll(async () => (await keyRequestsOf(shopper.id, key)).seen).toBe(1);
    expect((await keyRequestsOf(shopper.id, key)).rows).toMatchObject([
      {
        nth: 1,
        status: 201,
        answer: "completed",
        request_id: again.response.headers.get("x-request-id"),
      },
    ]);
  });

  it("spares an expired key whose attempt still holds a live lease", async () => {
    const shopper = await createAccount();
    const key = randomUUID();
    await postOrder({ token: shopper.token, key, headers: { "OncePay-Fault": "after-charge" } });
    await expireKey(shopper.id, key);
    await reapUntilNothingIsLeft();
    expect(await keyRow(shopper.id, key)).toMatchObject({ state: "in_flight" });
  });

  it("never deletes an expired key whose payment began, even once its lease has run out: the recovery worker finishes it", async () => {
    const shopper = await createAccount();
    const charged = randomUUID();
    const unstarted = randomUUID();
    const started = randomUUID();
    await postOrder({
      token: shopper.token,
      key: charged,
      headers: { "OncePay-Fault": "after-charge" },
    });
    // An attempt that claimed its key and died before charging: nothing to lose.
    await insertKey(shopper.id, unstarted, { point: "claimed" });
    // One that moved on to the charge and died there: the provider may have charged.
    await insertKey(shopper.id, started, { point: "payment_started", moved: true });
    await expireKey(shopper.id, charged);
    await expireLease(shopper.id, charged);

    await reapUntilNothingIsLeft();
    expect(await keyRow(shopper.id, charged)).toMatchObject({
      state: "in_flight",
      recovery_point: "payment_started",
    });
    expect(await keyRow(shopper.id, started)).toMatchObject({
      state: "in_flight",
      recovery_point: "payment_started",
    });
    expect(await keyRow(shopper.id, unstarted)).toBeUndefined();
    // Its request was never stored, so no recovery worker could finish it.
    await loseKey(shopper.id, started);
  });

  // On the embedded database every connection shares one session, so a row
  // lock held on one excludes nobody.
  itOnServer(
    "sessions",
    "skips a key another transaction holds, without waiting for it, and deletes it on a later run",
    async () => {
      const shopper = await createAccount();
      const key = randomUUID();
      expect((await postOrder({ token: shopper.token, key })).response.status).toBe(201);
      await expireKey(shopper.id, key);

      const holder = await testDb().connect();
      try {
        await holder.query("BEGIN");
        await holder.query(
          `SELECT id FROM idempotency_keys WHERE scope = $1 AND idem_key = $2 FOR UPDATE`,
          [shopper.id, key],
        );
        await reapUntilNothingIsLeft();
        expect(await keyRow(shopper.id, key)).toMatchObject({ state: "complete" });
      } finally {
        await holder.query("ROLLBACK");
        holder.release();
      }
      await reapUntilNothingIsLeft();
      expect(await keyRow(shopper.id, key)).toBeUndefined();
    },
  );
});

/**
 * A key in flight written straight into the table, as an attempt that died
 * would leave it: its lease and its time to live both run out. `moved`: it
 * got past its first point (the engine then sets point_reached_at).
 */
async function insertKey(
  accountId: string,
  key: string,
  { point, moved = false }: { point: string; moved?: boolean },
) {
  await testDb().query(
    `INSERT INTO idempotency_keys (scope, idem_key, operation, fingerprint, recovery_point, point_reached_at,
                                   lease_owner, lease_expires_at, expires_at)
     VALUES ($1, $2, 'checkout', $3, $4, CASE WHEN $5 THEN now() - interval '2 seconds' END,
             gen_random_uuid(), now() - interval '1 second', now() - interval '1 second')`,
    [accountId, key, "0".repeat(64), point, moved],
  );
}
