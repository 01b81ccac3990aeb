import { randomUUID } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { baseUrl, cartBody, createAccount, postOrder } from "@/lib/testing/api-client";
import { closeTestDb, countRows, keyRow } from "@/lib/testing/database";
import { rawCheckout, sendOverlapping } from "@/lib/testing/raw-http";

/**
 * The seed test: N identical requests, provably in flight at the same time,
 * must produce exactly one order. On PostgreSQL this is a real race; on the
 * embedded PGlite the statements are serialised and it only shows the
 * contract holds.
 */
afterAll(closeTestDb);

describe.each([2, 50])("%i identical requests in flight at once", (n) => {
  it("make exactly one order and one charge; every answer is 201 or 409; a later retry replays the order", async () => {
    const shopper = await createAccount();
    const key = randomUUID();
    const body = cartBody();
    const request = rawCheckout(shopper.token, key, body);

    const { responses, lastSentAt } = await sendOverlapping(
      baseUrl(),
      Array.from({ length: n }, () => request),
    );

    // All N were sent before the first answer arrived: they really overlapped.
    expect(Math.min(...responses.map((response) => response.receivedAt))).toBeGreaterThanOrEqual(
      lastSentAt,
    );

    const statuses = responses.map((response) => response.status);
    expect(statuses.filter((status) => status !== 201 && status !== 409)).toEqual([]);
    const created = responses.filter((response) => response.status === 201);
    expect(created.length).toBeGreaterThanOrEqual(1);
    // Every 201 is the same order: the first, or a replay of it.
    expect(new Set(created.map((response) => response.body)).size).toBe(1);
    for (const response of responses.filter((r) => r.status === 409)) {
      expect(Number(response.headers["retry-after"])).toBeGreaterThan(0);
    }

    const orders = await countRows("orders", shopper.id);
    const payments = await countRows("payments", shopper.id);
    // Logged before the checks, so a failing run still says what it found.
    console.info(
      `[seed test] n=${n}: ${statuses.filter((s) => s === 201).length}×201, ${statuses.filter((s) => s === 409).length}×409, orders=${orders}, payments=${payments}`,
    );
    expect(orders).toBe(1);
    expect(payments).toBe(1);
    expect(await keyRow(shopper.id, key)).toMatchObject({
      state: "complete",
      response_status: 201,
    });

    const retry = await postOrder({ token: shopper.token, key, body });
    expect(retry.response.status).toBe(201);
    expect(retry.response.headers.get("idempotent-replayed")).toBe("true");
    expect(retry.text).toBe(created[0]!.body);
  });
});
