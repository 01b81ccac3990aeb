import { randomUUID } from "node:crypto";
import { setTimeout as delay } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { paymentProviderKeyPrefix } from "@/lib/orders/provider-key";
import { cartBody, postOrder } from "@/lib/testing/api-client";
import { startAppServer, type AppServer } from "@/lib/testing/app-server";
import { total } from "@/lib/testing/prometheus-text";
import { rowsAt } from "@/lib/testing/rows";

/**
 * The rate limits, on an app of their own with small ones: three checkouts
 * per account and two new accounts per address in a three-second window,
 * behind one trusted proxy (as in the cluster). A refused request is a 429
 * problem+json with Retry-After, and it refuses before the key is claimed:
 * nothing is stored under the key, so the same key pays once the window
 * has room.
 */
const CHECKOUTS = 3;
const ACCOUNTS = 2;
const WINDOW_SECONDS = 3;

let app: AppServer;

beforeAll(async () => {
  app = await startAppServer({
    env: {
      CHECKOUT_RATE_LIMIT: String(CHECKOUTS),
      ACCOUNT_RATE_LIMIT: String(ACCOUNTS),
      RATE_LIMIT_WINDOW_SECONDS: String(WINDOW_SECONDS),
      TRUSTED_PROXIES: "1",
    },
  });
});

afterAll(async () => {
  await app?.stop();
});

function accountFrom(forwardedFor: string): Promise<Response> {
  return fetch(`${app.baseUrl}/api/accounts`, {
    method: "POST",
    headers: { "X-Forwarded-For": forwardedFor },
  });
}

describe("rate limits", () => {
  it("answers a checkout over the account's limit 429 with Retry-After, stores nothing under its key, and takes the same key once the window has room", async () => {
    const account = (await (await accountFrom("10.0.0.10")).json()) as {
      id: string;
      token: string;
    };
    for (let index = 0; index < CHECKOUTS; index++) {
      expect(
        (await postOrder({ baseUrl: app.baseUrl, token: account.token, key: randomUUID() }))
          .response.status,
      ).toBe(201);
    }
    const key = randomUUID();
    const body = cartBody();
    const { response, text } = await postOrder({
      baseUrl: app.baseUrl,
      token: account.token,
      key,
      body,
    });

    expect(response.status).toBe(429);
    expect(response.headers.get("content-type")).toBe("application/problem+json");
    const retryAfter = Number(response.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(WINDOW_SECONDS);
    expect(JSON.parse(text)).toMatchObject({
      type: "urn:oncepay:problem:rate-limited",
      status: 429,
      title: "Too many requests",
    });
    const rows = rowsAt(app.databaseUrl);
    expect(await rows.keyRow(account.id, key)).toBeUndefined();
    expect(await rows.tableCounts(account.id)).toEqual({
      orders: CHECKOUTS,
      payments: CHECKOUTS,
      idempotency_keys: CHECKOUTS,
    });
    expect(
      await rows.providerIntents({ keyPrefix: paymentProviderKeyPrefix(account.id) }),
    ).toMatchObject({ total: CHECKOUTS });

    await delay(retryAfter * 1000);
    const retried = await postOrder({ baseUrl: app.baseUrl, token: account.token, key, body });
    expect(retried.response.status).toBe(201);
    expect(retried.response.headers.get("idempotent-replayed")).toBeNull();
    expect(await rows.tableCounts(account.id)).toEqual({
      orders: CHECKOUTS + 1,
      payments: CHECKOUTS + 1,
      idempotency_keys: CHECKOUTS + 1,
    });
  });

  it("counts each account alone: one at its limit leaves another untouched", async () => {
    const busy = (await (await accountFrom("10.0.0.11")).json()) as { token: string };
    const quiet = (await (await accountFrom("10.0.0.11")).json()) as { token: string };
    for (let index = 0; index < CHECKOUTS; index++)
      await postOrder({ baseUrl: app.baseUrl, token: busy.token, key: randomUUID() });
    expect(
      (await postOrder({ baseUrl: app.baseUrl, token: busy.token, key: randomUUID() })).response
        .status,
    ).toBe(429);
    expect(
      (await postOrder({ baseUrl: app.baseUrl, token: quiet.token, key: randomUUID() })).response
        .status,
    ).toBe(201);
  });

  it("limits new accounts by the address the trusted proxy appended, not by what the caller forged before it", async () => {
    const statuses = [];
    for (const forged of ["6.6.6.6", "7.7.7.7"])
      statuses.push((await accountFrom(`${forged}, 10.0.0.20`)).status);
    expect(statuses).toEqual([201, 201]);
    const refused = await accountFrom("8.8.8.8, 10.0.0.20");
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(await refused.json()).toMatchObject({
      type: "urn:oncepay:problem:rate-limited",
      status: 429,
    });
    expect((await accountFrom("6.6.6.6, 10.0.0.21")).status).toBe(201);
  });

  it("counts refused checkouts as rate_limited in the metrics", async () => {
    const before = total(
      await (await fetch(`${app.baseUrl}/api/metrics`)).text(),
      "oncepay_checkout_outcomes_total",
      { outcome: "rate_limited" },
    );
    const account = (await (await accountFrom("10.0.0.30")).json()) as { token: string };
    for (let index = 0; index <= CHECKOUTS; index++)
      await postOrder({ baseUrl: app.baseUrl, token: account.token, key: randomUUID() });
    const after = total(
      await (await fetch(`${app.baseUrl}/api/metrics`)).text(),
      "oncepay_checkout_outcomes_total",
      { outcome: "rate_limited" },
    );
    expect(after - before).toBe(1);
  });
});
