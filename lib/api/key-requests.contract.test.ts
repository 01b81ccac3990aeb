import { randomUUID } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { FIRST_KEPT, LATEST_KEPT } from "@/lib/idempotency/key-requests";
import type { KeyInspection } from "@/lib/ledger/key-inspection";
import { baseUrl, cartBody, createAccount, postOrder } from "@/lib/testing/api-client";
import { HOLD_WHILE_OTHERS_ARRIVE_MS, setDemoSettings } from "@/lib/testing/api-client-demo";
import { closeTestDb, expireLease, keyRequestsOf } from "@/lib/testing/database";
import { itOnServer } from "@/lib/testing/postgres-server-only";
import { rawCheckout, sendOverlapping } from "@/lib/testing/raw-http";

/**
 * Every request that presents a key to the checkout is recorded under it,
 * once its answer is known, and GET /api/keys/{key} lists them in the order
 * they arrived: the first attempt, its 409s, 422s, failures and replays.
 */
afterAll(closeTestDb);

async function inspect(token: string, key: string): Promise<KeyInspection> {
  const response = await fetch(`${baseUrl()}/api/keys/${encodeURIComponent(key)}`, {
    headers: { Authorization: `Bearer ${token}` },
  });
  expect(response.status).toBe(200);
  return (await response.json()) as KeyInspection;
}

/** The record is written as the answer leaves (or just after, if the database is slow): wait for it, never assume it. */
async function waitForRecorded(accountId: string, key: string, count: number) {
  await expect.poll(async () => (await keyRequestsOf(accountId, key)).seen).toBe(count);
  return keyRequestsOf(accountId, key);
}

describe("the requests that presented a key", () => {
  it("records each one, one after another: failed, 409, 422, 400, the takeover's 201 and the replay, in order", async () => {
    const shopper = await createAccount();
    const key = randomUUID();
    const body = cartBody();
    const sent: { status: number; requestId: string }[] = [];
    const send = async (options: Parameters<typeof postOrder>[0]) => {
      const { response } = await postOrder({ token: shopper.token, key, ...options });
      sent.push({ status: response.status, requestId: response.headers.get("x-request-id")! });
    };

    await send({ body, headers: { "OncePay-Fault": "after-charge" } }); // charged, then failed: the key stays in flight
    await send({ body }); // the lease is still held: 409
    await send({ body: cartBody() }); // another cart under the key: 422
    await send({ rawBody: "{" }); // not JSON: refused before the key is looked at
    await expireLease(shopper.id, key);
    await send({ body }); // takes the key over and finishes it
    await send({ body }); // the stored answer again
    expect(sent.map((request) => request.status)).toEqual([500, 409, 422, 400, 201, 201]);

    const stored = await waitForRecorded(shopper.id, key, sent.length);
    const inspection = await inspect(shopper.token, key);

    expect(inspection.requests).toMatchObject({ seen: 6, notKept: 0 });
    expect(
      inspection.requests.data.map(({ attempt, requestId, status, answer }) => ({
        attempt,
        requestId,
        status,
        answer,
      })),
    ).toEqual([
      { attempt: 1, requestId: sent[0]!.requestId, status: 500, answer: "failed" },
      { attempt: 2, requestId: sent[1]!.requestId, status: 409, answer: "conflict" },
      { attempt: 3, requestId: sent[2]!.requestId, status: 422, answer: "mismatch" },
      { attempt: 4, requestId: sent[3]!.requestId, status: 400, answer: "rejected" },
      { attempt: 5, requestId: sent[4]!.requestId, status: 201, answer: "completed" },
      { attempt: 6, requestId: sent[5]!.requestId, status: 201, answer: "replay" },
    ]);
    // The answer is what the database holds, times and all.
    expect(inspection.requests.data.map((request) => request.requestId)).toEqual(
      stored.rows.map((row) => row.request_id),
    );
    expect(inspection.requests.data.map((request) => request.receivedAt)).toEqual(
      stored.rows.map((row) => row.received_at.toISOString()),
    );
    for (const request of inspection.requests.data)
      expect(Date.parse(request.answeredAt)).toBeGreaterThanOrEqual(Date.parse(request.receivedAt));
    // The key was claimed while the first request ran, and the last arrived after it finished.
    // (Not "the first arrived before the claim": a request's arrival is the database's clock
    // at its recording less the time the app says it took, which is late by the recording's
    // own way to the database, and the claim comes a millisecond or two after the arrival.)
    expect(Date.parse(inspection.reached.claimed)).toBeLessThanOrEqual(
      Date.parse(inspection.requests.data[0]!.answeredAt),
    );
    expect(Date.parse(inspection.requests.data[5]!.receivedAt)).toBeGreaterThanOrEqual(
      Date.parse(inspection.reached.finished!),
    );
  });

  it("records an answer that broke off on the way as lost, and its retry as the replay", async () => {
    const shopper = await createAccount();
    expect(
      (await setDemoSettings(shopper.token, { networkDelayMs: 0, loseResponse: true })).status,
    ).toBe(200);
    const key = randomUUID();
    const body = cartBody();
    await expect(postOrder({ token: shopper.token, key, body })).rejects.toThrow(TypeError);
    const retry = await postOrder({ token: shopper.token, key, body });
    expect(retry.response.headers.get("idempotent-replayed")).toBe("true");

    const stored = await waitForRecorded(shopper.id, key, 2);
    expect(stored.rows.map(({ status, answer }) => ({ status, answer }))).toEqual([
      { status: 201, answer: "lost" },
      { status: 201, answer: "replay" },
    ]);
    expect(stored.rows[1]!.request_id).toBe(retry.response.headers.get("x-request-id"));
  });

  it("keeps another account's requests under its own key, even when it sends the same key string", async () => {
    const shopper = await createAccount();
    const other = await createAccount();
    const key = randomUUID();
    expect((await postOrder({ token: shopper.token, key })).response.status).toBe(201);
    await waitForRecorded(shopper.id, key, 1);

    const theirs = await postOrder({ token: other.token, key });
    expect(theirs.response.status).toBe(201);
    expect(theirs.response.headers.get("idempotent-replayed")).toBeNull();

    await waitForRecorded(other.id, key, 1);
    expect((await inspect(shopper.token, key)).requests.data).toHaveLength(1);
    const mine = await keyRequestsOf(shopper.id, key);
    expect(mine.rows.map((row) => row.request_id)).not.toContain(
      theirs.response.headers.get("x-request-id"),
    );
  });

  it(`keeps the first ${FIRST_KEPT} and the latest ${LATEST_KEPT} of a key's requests, and says how many are not kept`, async () => {
    const shopper = await createAccount();
    const key = randomUUID();
    const body = cartBody();
    const total = FIRST_KEPT + LATEST_KEPT + 5;
    const requestIds: string[] = [];
    for (let sent = 0; sent < total; sent++) {
      const { response } = await postOrder({ token: shopper.token, key, body });
      expect(response.status).toBe(201);
      requestIds.push(response.headers.get("x-request-id")!);
    }

    const stored = await waitForRecorded(shopper.id, key, total);
    const { requests } = await inspect(shopper.token, key);

    expect(stored.rows).toHaveLength(FIRST_KEPT + LATEST_KEPT);
    expect(requests.seen).toBe(total);
    expect(requests.notKept).toBe(5);
    const expectedAttempts = [
      ...Array.from({ length: FIRST_KEPT }, (_, index) => index + 1),
      ...Array.from({ length: LATEST_KEPT }, (_, index) => total - LATEST_KEPT + index + 1),
    ];
    expect(requests.data.map((request) => request.attempt)).toEqual(expectedAttempts);
    expect(requests.data.map((request) => request.requestId)).toEqual(
      expectedAttempts.map((attempt) => requestIds[attempt - 1]),
    );
    expect(requests.data.map((request) => request.answer)).toEqual([
      "completed",
      ...Array.from({ length: FIRST_KEPT + LATEST_KEPT - 1 }, () => "replay"),
    ]);
  });

  itOnServer(
    "concurrency",
    "records every one of overlapping requests, the ones that lost the race to the first included",
    async () => {
      const shopper = await createAccount();
      // The winner holds the key for a while before it charges: every other request finds it held.
      expect(
        (
          await setDemoSettings(shopper.token, {
            networkDelayMs: HOLD_WHILE_OTHERS_ARRIVE_MS,
            loseResponse: false,
          })
        ).status,
      ).toBe(200);
      const key = randomUUID();
      const n = 8;
      const request = rawCheckout(shopper.token, key, cartBody());

      const { responses, lastSentAt } = await sendOverlapping(
        baseUrl(),
        Array.from({ length: n }, () => request),
      );
      expect(Math.min(...responses.map((response) => response.receivedAt))).toBeGreaterThanOrEqual(
        lastSentAt,
      );
      const statuses = responses.map((response) => response.status).sort();
      expect(statuses).toEqual([201, ...Array.from({ length: n - 1 }, () => 409)]);

      const stored = await waitForRecorded(shopper.id, key, n);
      const byRequestId = new Map(
        responses.map((response) => [response.headers["x-request-id"], response.status]),
      );
      expect(stored.rows).toHaveLength(n);
      expect(new Set(stored.rows.map((row) => row.request_id))).toEqual(
        new Set(byRequestId.keys()),
      );
      for (const row of stored.rows) {
        expect(row.status).toBe(byRequestId.get(row.request_id));
        expect(row.answer).toBe(row.status === 201 ? "completed" : "conflict");
      }
      // Numbered once each, whichever order they were answered in.
      expect(stored.rows.map((row) => row.nth).sort((a, b) => a - b)).toEqual(
        Array.from({ length: n }, (_, index) => index + 1),
      );
      const { requests } = await inspect(shopper.token, key);
      expect(requests.data.map((entry) => entry.attempt)).toEqual(
        Array.from({ length: n }, (_, index) => index + 1),
      );
    },
  );
});
