import { randomUUID } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { reapExpiredKeys } from "@/lib/idempotency/reaper";
import { createAccount, postOrder } from "@/lib/testing/api-client";
import { closeTestDb, countRows, expireKey, keyRow, testDb, testPrisma } from "@/lib/testing/database";

afterAll(closeTestDb);

describe("the reaper", () => {
  it("deletes expired keys in bounded batches and keeps their orders", async () => {
    const shopper = await createAccount();
    const expired = Array.from({ length: 5 }, () => randomUUID());
    const live = randomUUID();
    for (const key of [...expired, live]) expect((await postOrder({ token: shopper.token, key })).response.status).toBe(201);
    for (const key of expired) await expireKey(shopper.id, key);

    // A batch of 2, at most 2 batches: 4 of the 5 go in this run.
    expect(await reapExpiredKeys(testPrisma(), { batchSize: 2, maxBatches: 2 })).toBeGreaterThanOrEqual(4);
    await reapExpiredKeys(testPrisma(), { batchSize: 100, maxBatches: 10 });

    for (const key of expired) expect(await keyRow(shopper.id, key)).toBeUndefined();
    expect(await keyRow(shopper.id, live)).toMatchObject({ state: "complete" });
    expect(await countRows("orders", shopper.id)).toBe(6);
    const { rows } = await testDb().query(`SELECT count(*)::int AS n FROM orders WHERE account_id = $1 AND idempotency_key_id IS NULL`, [shopper.id]);
    expect(rows[0].n).toBe(5);
  });

  it("spares an expired key whose attempt still holds a live lease", async () => {
    const shopper = await createAccount();
    const key = randomUUID();
    await postOrder({ token: shopper.token, key, headers: { "OncePay-Fault": "after-charge" } });
    await expireKey(shopper.id, key);
    await reapExpiredKeys(testPrisma(), { batchSize: 100, maxBatches: 10 });
    expect(await keyRow(shopper.id, key)).toMatchObject({ state: "in_flight" });
  });
});
