import { randomInt, randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashToken } from "@/lib/auth/accounts";
import { paymentProviderKeyPrefix } from "@/lib/orders/provider-key";
import { browserSession, cartBody, postOrder } from "@/lib/testing/api-client";
import { startAppServer, type AppServer } from "@/lib/testing/app-server";
import { describeOnServer, itOnServer } from "@/lib/testing/postgres-server-only";
import { total } from "@/lib/observability/prometheus-text";
import {
  postFrom,
  rawCheckout,
  sendOverlapping,
  type RawRequest,
  type RawResponse,
} from "@/lib/testing/raw-http";
import { rowsAt } from "@/lib/testing/rows";

/**
 * The rate limits, on an app of their own with small ones: three checkouts
 * per account and two new accounts per address in a window, behind one
 * trusted proxy (as in the cluster). A refused request is a 429
 * problem+json with Retry-After; only a request that claims a new key is
 * counted, and a refusal releases the claim at once: nothing is stored
 * under the key, so the same key pays once the window has room.
 *
 * Every window is far longer than the tests run, however slow the machine
 * (one that ended mid-test would let through what a test expects refused);
 * a test that needs the window over ends it in the table
 * (endRateLimitWindow) rather than waiting for the clock. Windows outlive
 * the run on a PostgreSQL server, so each test counts new accounts from
 * addresses of its own (newAddress), and the apps whose new accounts are not
 * under test do not limit them (their windows would be 127.0.0.1's, which
 * every app on the same database shares).
 */
const CHECKOUTS = 3;
const ACCOUNTS = 2;
const WINDOW_SECONDS = 600;

/** An address no earlier run counted: 10.x.y.z behind the trusted proxy. */
const newAddress = () => `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`;
/** The same for a client on loopback (every 127.x.y.z is one on Linux), never 127.0.0.1. */
const newLoopbackAddress = () => `127.${randomInt(1, 256)}.${randomInt(256)}.${randomInt(1, 255)}`;

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
    const account = (await (await accountFrom(newAddress())).json()) as {
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
      type: "/problems/rate-limited",
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

    await rows.endRateLimitWindow(`checkouts:${account.id}`);
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
    const address = newAddress();
    const busy = (await (await accountFrom(address)).json()) as { token: string };
    const quiet = (await (await accountFrom(address)).json()) as { token: string };
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
    const [address, another] = [newAddress(), newAddress()];
    const statuses = [];
    for (const forged of ["6.6.6.6", "7.7.7.7"])
      statuses.push((await accountFrom(`${forged}, ${address}`)).status);
    expect(statuses).toEqual([201, 201]);
    const refused = await accountFrom(`8.8.8.8, ${address}`);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(await refused.json()).toMatchObject({
      type: "/problems/rate-limited",
      status: 429,
    });
    expect((await accountFrom(`6.6.6.6, ${another}`)).status).toBe(201);
  });

  it("counts a browser's account, made on its session's first use, once against its address's limit on new accounts", async () => {
    const address = newAddress();
    const window = `accounts:${address}`;
    const firstCall = (session: { cookie: string }) =>
      fetch(`${app.baseUrl}/api/orders`, {
        headers: { Cookie: session.cookie, "X-Forwarded-For": address },
      });
    const [first, second, third] = [
      await browserSession(app.baseUrl),
      await browserSession(app.baseUrl),
      await browserSession(app.baseUrl),
    ];
    const rows = rowsAt(app.databaseUrl);

    expect((await firstCall(first)).status).toBe(200);
    expect(await rows.rateLimitPoints(window)).toBe(1);
    expect((await accountFrom(address)).status).toBe(201);
    const refused = await firstCall(second);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(await refused.json()).toMatchObject({ type: "/problems/rate-limited" });
    expect(await rows.accountIdByTokenHash(hashToken(second.token))).toBeUndefined();
    expect(await rows.rateLimitPoints(window)).toBe(ACCOUNTS + 1);
    // A browser that already has its account is not a new account.
    expect((await firstCall(first)).status).toBe(200);
    expect(await rows.rateLimitPoints(window)).toBe(ACCOUNTS + 1);

    await rows.endRateLimitWindow(window);
    expect((await firstCall(third)).status).toBe(200);
    // The refused browser's account is made on a later call, in a window with room.
    expect((await firstCall(second)).status).toBe(200);
    expect(await rows.accountIdByTokenHash(hashToken(second.token))).toBeDefined();
    expect(await rows.rateLimitPoints(window)).toBe(2);
  });

  // A new browser's first page often makes several API calls at once: all
  // of them find no account, and all of them make the same one.
  const OVERLAPPING = 10;
  const overlappingFirstCalls = async (address: string) => {
    const session = await browserSession(app.baseUrl);
    const firstCall: RawRequest = {
      method: "GET",
      path: "/api/orders",
      headers: { Cookie: session.cookie, "X-Forwarded-For": address },
    };
    const { responses, lastSentAt } = await sendOverlapping(
      app.baseUrl,
      Array.from({ length: OVERLAPPING }, () => firstCall),
    );
    // All were sent before the first answer arrived: they really overlapped.
    expect(Math.min(...responses.map((response) => response.receivedAt))).toBeGreaterThanOrEqual(
      lastSentAt,
    );
    return { session, statuses: responses.map((response: RawResponse) => response.status) };
  };

  itOnServer(
    "concurrency",
    `counts a new browser's account once when ${OVERLAPPING} of its first requests overlap`,
    async () => {
      const address = newAddress();
      const { session, statuses } = await overlappingFirstCalls(address);

      expect(statuses).toEqual(Array.from({ length: OVERLAPPING }, () => 200));
      const rows = rowsAt(app.databaseUrl);
      expect(await rows.rateLimitPoints(`accounts:${address}`)).toBe(1);
      expect(await rows.accountIdByTokenHash(hashToken(session.token))).toBeDefined();
      // So the address still has room for its second account.
      expect((await accountFrom(address)).status).toBe(201);
    },
  );

  itOnServer(
    "concurrency",
    `makes no account for a new browser whose address is at its limit, however many of its first requests overlap`,
    async () => {
      const address = newAddress();
      for (let index = 0; index < ACCOUNTS; index++)
        expect((await accountFrom(address)).status).toBe(201);
      const { session, statuses } = await overlappingFirstCalls(address);

      expect(statuses).toEqual(Array.from({ length: OVERLAPPING }, () => 429));
      const rows = rowsAt(app.databaseUrl);
      expect(await rows.accountIdByTokenHash(hashToken(session.token))).toBeUndefined();
      // Each refused request counts, as a refused POST /api/accounts does.
      expect(await rows.rateLimitPoints(`accounts:${address}`)).toBe(ACCOUNTS + OVERLAPPING);
    },
  );

  it("counts refused checkouts as rate_limited in the metrics", async () => {
    const before = total(
      await (await fetch(`${app.baseUrl}/api/metrics`)).text(),
      "oncepay_checkout_outcomes_total",
      { outcome: "rate_limited" },
    );
    const account = (await (await accountFrom(newAddress())).json()) as { token: string };
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

describe("new accounts per address with no proxy in front (the npm start default)", () => {
  // No trusted proxy: the address is the connection's peer, whatever
  // X-Forwarded-For says. Each 127.x.y.z is another client on loopback.
  let direct: AppServer;

  beforeAll(async () => {
    direct = await startAppServer({
      env: {
        ACCOUNT_RATE_LIMIT: String(ACCOUNTS),
        RATE_LIMIT_WINDOW_SECONDS: String(WINDOW_SECONDS),
        TRUSTED_PROXIES: "0",
      },
    });
  });

  afterAll(async () => {
    await direct?.stop();
  });

  it("counts the connection's address: a forged X-Forwarded-For, X-Real-IP or Forwarded does not escape the limit", async () => {
    const url = `${direct.baseUrl}/api/accounts`;
    const forgeries: Record<string, string>[] = [
      { "X-Forwarded-For": "203.0.113.1" },
      { "X-Forwarded-For": "203.0.113.2, 198.51.100.2" },
      { "X-Forwarded-For": "203.0.113.3", "X-Real-IP": "203.0.113.3" },
      { Forwarded: "for=203.0.113.4" },
    ];
    const [client, another] = [newLoopbackAddress(), newLoopbackAddress()];
    const statuses = [];
    for (const headers of forgeries) statuses.push((await postFrom(client, url, headers)).status);

    expect(statuses).toEqual([201, 201, 429, 429]);
    // Another address is another bucket.
    expect((await postFrom(another, url, {})).status).toBe(201);
  });
});

describe("the checkout limit counts only claims", () => {
  // No concurrency needed, so on both databases, on an app of its own so
  // nothing else counts.
  let claimApp: AppServer;

  beforeAll(async () => {
    claimApp = await startAppServer({
      env: {
        CHECKOUT_RATE_LIMIT: String(CHECKOUTS),
        ACCOUNT_RATE_LIMIT: "0",
        RATE_LIMIT_WINDOW_SECONDS: String(WINDOW_SECONDS),
      },
    });
  });

  afterAll(async () => {
    await claimApp?.stop();
  });

  it("a full window still answers a replay 201 with Idempotent-Replayed and a reused key 422, and neither moves its points", async () => {
    const account = (await (
      await fetch(`${claimApp.baseUrl}/api/accounts`, { method: "POST" })
    ).json()) as { id: string; token: string };
    const rows = rowsAt(claimApp.databaseUrl);
    const paid: { key: string; body: ReturnType<typeof cartBody> }[] = [];
    for (let index = 0; index < CHECKOUTS; index++) {
      const key = randomUUID();
      const body = cartBody();
      const { response } = await postOrder({
        baseUrl: claimApp.baseUrl,
        token: account.token,
        key,
        body,
      });
      expect(response.status).toBe(201);
      paid.push({ key, body });
    }
    const points = `checkouts:${account.id}`;
    expect(await rows.rateLimitPoints(points)).toBe(CHECKOUTS);

    const [first, second] = paid;
    const replay = await postOrder({
      baseUrl: claimApp.baseUrl,
      token: account.token,
      key: first!.key,
      body: first!.body,
    });
    expect(replay.response.status).toBe(201);
    expect(replay.response.headers.get("idempotent-replayed")).toBe("true");
    const reused = await postOrder({
      baseUrl: claimApp.baseUrl,
      token: account.token,
      key: second!.key,
      body: cartBody(),
    });
    expect(reused.response.status).toBe(422);
    expect(await rows.rateLimitPoints(points)).toBe(CHECKOUTS);

    // The window is full all the same: a new key is refused.
    const fresh = await postOrder({
      baseUrl: claimApp.baseUrl,
      token: account.token,
      key: randomUUID(),
    });
    expect(fresh.response.status).toBe(429);
  });
});

describeOnServer("concurrency", "the checkout limit under storms of one key", () => {
  // An app of its own, so that nothing else counts against its window.
  const STORM = 40;
  let stormApp: AppServer;

  beforeAll(async () => {
    stormApp = await startAppServer({
      env: {
        CHECKOUT_RATE_LIMIT: String(CHECKOUTS),
        ACCOUNT_RATE_LIMIT: "0",
        RATE_LIMIT_WINDOW_SECONDS: String(WINDOW_SECONDS),
      },
    });
  });

  afterAll(async () => {
    await stormApp?.stop();
  });

  it("counts exactly the requests that claim: three storms of 40 identical requests under three keys count 3, and none is refused", async () => {
    const account = (await (
      await fetch(`${stormApp.baseUrl}/api/accounts`, { method: "POST" })
    ).json()) as {
      id: string;
      token: string;
    };
    const rows = rowsAt(stormApp.databaseUrl);
    const statusesByStorm: Record<string, number>[] = [];

    for (let storm = 0; storm < CHECKOUTS; storm++) {
      const request = rawCheckout(account.token, randomUUID(), cartBody());
      const { responses, lastSentAt } = await sendOverlapping(
        stormApp.baseUrl,
        Array.from({ length: STORM }, () => request),
      );
      // All 40 were sent before the first answer arrived: they really overlapped.
      expect(Math.min(...responses.map((response) => response.receivedAt))).toBeGreaterThanOrEqual(
        lastSentAt,
      );
      const statuses: Record<string, number> = {};
      for (const { status } of responses) statuses[status] = (statuses[status] ?? 0) + 1;
      statusesByStorm.push(statuses);
    }

    // Logged before the checks, so a failing run still says what it found.
    console.info(`[rate-limit storms] ${JSON.stringify(statusesByStorm)}`);
    for (const statuses of statusesByStorm) {
      expect(Object.keys(statuses).sort()).toEqual(expect.arrayContaining(["201"]));
      expect(statuses["429"]).toBeUndefined();
    }
    expect(await rows.tableCounts(account.id)).toEqual({
      orders: CHECKOUTS,
      payments: CHECKOUTS,
      idempotency_keys: CHECKOUTS,
    });
    // The window counted the three claims, and nothing else.
    const window = await rows.rateLimitPoints(`checkouts:${account.id}`);
    expect(window).toBe(CHECKOUTS);
    // And it is full: the next new key is refused.
    expect(
      (await postOrder({ baseUrl: stormApp.baseUrl, token: account.token, key: randomUUID() }))
        .response.status,
    ).toBe(429);
  });
});
