import { randomUUID } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import type { Queryable } from "@/lib/db/sql";
import { keyRequestRecorder } from "@/lib/idempotency/key-request-recorder";
import { FIRST_KEPT, LATEST_KEPT } from "@/lib/idempotency/key-requests";
import { closeTestDb, keyRequestsOf, testDb } from "@/lib/testing/database";

afterAll(closeTestDb);

/** A key row of the engine's table, as a claim leaves it. */
async function keyOf(scope: string, key = randomUUID()): Promise<string> {
  await testDb().query(
    `INSERT INTO idempotency_keys (scope, idem_key, operation, fingerprint, recovery_point, expires_at)
     VALUES ($1, $2, 'checkout', repeat('0', 64), 'claimed', now() + interval '1 hour')`,
    [scope, key],
  );
  return key;
}

function answered(accountId: string, idempotencyKey: string, requestId: string, status = 201) {
  return {
    accountId,
    idempotencyKey,
    requestId,
    status,
    answer: status === 201 ? ("replay" as const) : ("conflict" as const),
    elapsedMs: 5,
  };
}

describe("the requests presented under keys, written behind their answers", () => {
  it("writes a batch of several keys and accounts in one go, numbering each key's requests in the order they were answered", async () => {
    const [shopper, other] = [randomUUID(), randomUUID()];
    const key = await keyOf(shopper);
    const otherKey = await keyOf(other);
    // The same key string under another account that never claimed it: no row, so no record.
    const recorder = keyRequestRecorder(testDb());
    recorder.record(answered(shopper, key, "a-1"));
    recorder.record(answered(other, otherKey, "b-1", 409));
    recorder.record(answered(shopper, key, "a-2", 409));
    recorder.record(answered(other, key, "stranger"));
    recorder.record(answered(shopper, key, "a-3"));
    await recorder.flushed();

    const mine = await keyRequestsOf(shopper, key);
    expect(mine.seen).toBe(3);
    expect(mine.rows.map((row) => [row.nth, row.request_id])).toEqual([
      [1, "a-1"],
      [2, "a-2"],
      [3, "a-3"],
    ]);
    const theirs = await keyRequestsOf(other, otherKey);
    expect(theirs.rows.map((row) => [row.nth, row.request_id, row.status])).toEqual([
      [1, "b-1", 409],
    ]);
    expect((await keyRequestsOf(other, key)).rows).toEqual([]);
    for (const row of mine.rows)
      expect(row.answered_at.getTime()).toBeGreaterThanOrEqual(row.received_at.getTime());
  });

  it("gives every request its own number when batches of one key are written at once", async () => {
    const shopper = randomUUID();
    const key = await keyOf(shopper);
    const recorders = Array.from({ length: 4 }, () => keyRequestRecorder(testDb()));
    recorders.forEach((recorder, r) => {
      for (let i = 0; i < 5; i++) recorder.record(answered(shopper, key, `r${r}-${i}`));
    });
    await Promise.all(recorders.map((recorder) => recorder.flushed()));

    const { seen, rows } = await keyRequestsOf(shopper, key);
    expect(seen).toBe(20);
    expect(rows.map((row) => row.nth).sort((a, b) => a - b)).toEqual(
      Array.from({ length: 20 }, (_, i) => i + 1),
    );
    expect(new Set(rows.map((row) => row.request_id)).size).toBe(20);
  });

  it(`keeps the first ${FIRST_KEPT} and the latest ${LATEST_KEPT} of a key's requests across batches`, async () => {
    const shopper = randomUUID();
    const key = await keyOf(shopper);
    const total = FIRST_KEPT + LATEST_KEPT + 15;
    const recorder = keyRequestRecorder(testDb());
    for (let i = 1; i <= total; i++) {
      recorder.record(answered(shopper, key, `req-${i}`));
      // Three batches: a batch cannot trim what it writes itself beyond its own snapshot.
      if (i % 20 === 0) await recorder.flushed();
    }
    await recorder.flushed();
    // One more batch sees every row the ones before committed.
    recorder.record(answered(shopper, key, `req-${total + 1}`));
    await recorder.flushed();

    const { seen, rows } = await keyRequestsOf(shopper, key);
    expect(seen).toBe(total + 1);
    const kept = rows.map((row) => row.nth).sort((a, b) => a - b);
    expect(kept).toEqual([
      ...Array.from({ length: FIRST_KEPT }, (_, i) => i + 1),
      ...Array.from({ length: LATEST_KEPT }, (_, i) => total + 1 - LATEST_KEPT + 1 + i),
    ]);
  });

  it("logs a batch the database refused and still writes the next one", async () => {
    const shopper = randomUUID();
    const key = await keyOf(shopper);
    let refuse = true;
    const flaky: Queryable = {
      query(text, values) {
        if (refuse) return Promise.reject(new Error("connection terminated"));
        return testDb().query(text, values);
      },
    };
    const recorder = keyRequestRecorder(flaky);
    recorder.record(answered(shopper, key, "lost"));
    await expect(recorder.flushed()).resolves.toBeUndefined();
    refuse = false;
    recorder.record(answered(shopper, key, "kept"));
    await recorder.flushed();

    const { rows } = await keyRequestsOf(shopper, key);
    expect(rows.map((row) => row.request_id)).toEqual(["kept"]);
  });

  it("writes a record on its own within moments, with nobody asking for a flush", async () => {
    const shopper = randomUUID();
    const key = await keyOf(shopper);
    keyRequestRecorder(testDb()).record(answered(shopper, key, "alone"));
    await expect
      .poll(async () => (await keyRequestsOf(shopper, key)).rows.map((row) => row.request_id))
      .toEqual(["alone"]);
  });
});
