import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fingerprintRequest } from "@oncepay/idempotency";
import { paymentProviderKey } from "@/lib/orders/provider-key";
import { cartBody, postOrder } from "@/lib/testing/api-client";
import { startAppServer, type AppServer } from "@/lib/testing/app-server";
import { rowsAt } from "@/lib/testing/rows";

/**
 * Every log line of a request carries its context: an app of its own,
 * logging at info, whose output the test reads line by line.
 */
let app: AppServer;

beforeAll(async () => {
  app = await startAppServer({ env: { LOG_LEVEL: "info" } });
});

afterAll(async () => {
  await app?.stop();
});

function logLines(): Record<string, unknown>[] {
  return app
    .output()
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe("the log", () => {
  it("is one JSON object per line, each of a request's lines naming its request, account, key, key row and provider key", async () => {
    const account = (await (
      await fetch(`${app.baseUrl}/api/accounts`, { method: "POST" })
    ).json()) as { id: string; token: string };
    const key = randomUUID();
    const requestId = `lb-${randomUUID()}`;
    const body = cartBody();
    // before-charge: the attempt fails, and logs it, once the key row and
    // the provider key are known; nothing was charged, so the key is released
    // (no key is left in flight for other tests' recovery runs to find).
    const { response } = await postOrder({
      baseUrl: app.baseUrl,
      token: account.token,
      key,
      body,
      headers: { "X-Request-Id": requestId, "OncePay-Fault": "before-charge" },
    });
    expect(response.status).toBe(500);
    expect(await rowsAt(app.databaseUrl).keyRow(account.id, key)).toBeUndefined();

    await expect
      .poll(() => logLines().filter((line) => line.requestId === requestId).length)
      .toBeGreaterThanOrEqual(2);
    const lines = logLines().filter((line) => line.requestId === requestId);
    expect(lines.map((line) => line.event)).toEqual(
      expect.arrayContaining(["idempotency.operation_failed", "http.request"]),
    );
    const keyId = lines[0]!.keyId as string;
    expect(keyId).toMatch(/^[0-9a-f-]{36}$/);
    for (const line of lines) {
      expect(line).toMatchObject({
        accountId: account.id,
        idempotencyKey: key,
        keyId,
        providerKey: paymentProviderKey(
          {
            accountId: account.id,
            idempotencyKey: key,
            fingerprint: fingerprintRequest("POST", "/api/orders", body),
          },
          0,
        ),
        level: expect.any(String),
        time: expect.any(String),
      });
    }
  });
});
