import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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
    const account = (await (await fetch(`${app.baseUrl}/api/accounts`, { method: "POST" })).json()) as { id: string; token: string };
    const key = randomUUID();
    const requestId = `lb-${randomUUID()}`;
    // after-charge: the attempt logs a failure after the key row and the provider key are known.
    const { response } = await postOrder({ baseUrl: app.baseUrl, token: account.token, key, body: cartBody(), headers: { "X-Request-Id": requestId, "OncePay-Fault": "after-charge" } });
    expect(response.status).toBe(500);
    const keyRow = await rowsAt(app.databaseUrl).keyRow(account.id, key);
    expect(keyRow).toBeDefined();

    await expect.poll(() => logLines().filter((line) => line.requestId === requestId).length).toBeGreaterThanOrEqual(2);
    const lines = logLines().filter((line) => line.requestId === requestId);
    expect(lines.map((line) => line.event)).toEqual(expect.arrayContaining(["idempotency.perform_failed", "http.request"]));
    for (const line of lines) {
      expect(line).toMatchObject({
        accountId: account.id,
        idempotencyKey: key,
        keyId: keyRow!.id,
        providerKey: paymentProviderKey(account.id, keyRow!.id),
        level: expect.any(String),
        time: expect.any(String),
      });
    }
  });
});
