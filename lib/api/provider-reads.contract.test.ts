import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { StormReport } from "@/lib/lab/storms";
import type { PaymentSimulator } from "@/lib/payments/simulator/server";
import { browserSession, cartBody, createAccount } from "@/lib/testing/api-client";
import { startLabStorm } from "@/lib/testing/api-client-demo";
import { startAppServer, type AppServer } from "@/lib/testing/app-server";
import { startHttpRecorder, type HttpRecorder } from "@/lib/testing/http-recorder";
import { startTestSimulator } from "@/lib/testing/payment-simulator";

/**
 * What one account can make the shop ask the payment provider, on an app
 * of its own with small limits: the provider is the shop's, shared with
 * every checkout, and past its rate limit real checkouts fail. Reads that
 * ask the provider (a storm's report, the storm list, the key inspector,
 * the ledger page) spend the account's PROVIDER_READ_RATE_LIMIT, one point
 * a lookup, all of a request's lookups at once or none; every request to
 * the lab spends its LAB_RATE_LIMIT. Over either: 429 with Retry-After, and
 * the provider is not asked. What the provider was asked is counted by a
 * recorder between the app and the simulator, not by the app.
 */
const PROVIDER_READS = 3;
const LAB_REQUESTS = 8;

let simulator: PaymentSimulator;
let recorder: HttpRecorder;
let app: AppServer;

beforeAll(async () => {
  simulator = await startTestSimulator();
  recorder = await startHttpRecorder(simulator.url);
  app = await startAppServer({
    env: {
      PAYMENT_SIMULATOR_URL: recorder.url,
      PROVIDER_READ_RATE_LIMIT: String(PROVIDER_READS),
      LAB_RATE_LIMIT: String(LAB_REQUESTS),
      // Long enough that no window ends during a test.
      RATE_LIMIT_WINDOW_SECONDS: "600",
    },
  });
});

afterAll(async () => {
  await app?.stop();
  await recorder?.close();
  await simulator?.close();
});

/** Requests the provider got since `from` (an index into the recorder's list) to `path`. */
function askedSince(from: number, method: string, path: string): number {
  return recorder
    .requests()
    .slice(from)
    .filter((request) => request.method === method && request.path === path).length;
}
const searchesSince = (from: number) => askedSince(from, "GET", "/v1/payment_intents/search");

function get(path: string, token: string): Promise<Response> {
  return fetch(`${app.baseUrl}${path}`, { headers: { Authorization: `Bearer ${token}` } });
}

/** POST /api/orders as the given caller (a bearer token, or a browser's session cookie). */
function checkout(caller: Record<string, string>, key: string): Promise<Response> {
  return fetch(`${app.baseUrl}/api/orders`, {
    method: "POST",
    headers: { ...caller, "Content-Type": "application/json", "Idempotency-Key": key },
    body: JSON.stringify(cartBody()),
  });
}

async function expectRateLimited(response: Response, about: RegExp): Promise<void> {
  expect(response.status).toBe(429);
  expect(response.headers.get("content-type")).toBe("application/problem+json");
  const retryAfter = Number(response.headers.get("retry-after"));
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(600);
  expect(await response.json()).toMatchObject({
    type: "/problems/rate-limited",
    status: 429,
    detail: expect.stringMatching(about),
  });
}

describe("provider reads per account", () => {
  it(`answers ${PROVIDER_READS} storm reports, refuses the next with 429 and Retry-After, and the provider saw ${PROVIDER_READS} searches`, async () => {
    const account = await createAccount(app.baseUrl);
    const storm = await startLabStorm(account.token, app.baseUrl);
    const key = randomUUID();
    expect((await checkout({ Authorization: `Bearer ${account.token}` }, key)).status).toBe(201);
    const from = recorder.requests().length;

    for (let read = 0; read < PROVIDER_READS; read++)
      expect((await get(`/api/lab/storms/${storm.id}`, account.token)).status).toBe(200);
    await expectRateLimited(
      await get(`/api/lab/storms/${storm.id}`, account.token),
      /payment provider/,
    );
    // The same budget covers the key inspector.
    await expectRateLimited(await get(`/api/keys/${key}`, account.token), /payment provider/);
    expect(searchesSince(from)).toBe(PROVIDER_READS);

    // Per account: another one still reads.
    const other = await createAccount(app.baseUrl);
    const itsStorm = await startLabStorm(other.token, app.baseUrl);
    expect((await get(`/api/lab/storms/${itsStorm.id}`, other.token)).status).toBe(200);
    expect(searchesSince(from)).toBe(PROVIDER_READS + 1);
  });

  it("the storm list asks for all its reports or for none", async () => {
    const account = await createAccount(app.baseUrl);
    await startLabStorm(account.token, app.baseUrl);
    await startLabStorm(account.token, app.baseUrl);
    const from = recorder.requests().length;

    const listed = await get("/api/lab/storms", account.token);
    expect(listed.status).toBe(200);
    expect(((await listed.json()) as { data: unknown[] }).data).toHaveLength(2);
    expect(searchesSince(from)).toBe(2);
    // One lookup left in the window, and the list needs two.
    await expectRateLimited(await get("/api/lab/storms", account.token), /payment provider/);
    expect(searchesSince(from)).toBe(2);
  });

  it("the ledger page counts charges while the account's lookups last, then shows its orders uncounted and asks nothing", async () => {
    const session = await browserSession(app.baseUrl);
    for (let order = 0; order < 2; order++) {
      const paid = await checkout(
        { Cookie: session.cookie, "Sec-Fetch-Site": "same-origin" },
        randomUUID(),
      );
      expect(paid.status).toBe(201);
    }
    const from = recorder.requests().length;
    const page = () => fetch(`${app.baseUrl}/orders`, { headers: { Cookie: session.cookie } });

    const counted = await page();
    expect(counted.status).toBe(200);
    expect(await counted.text()).toContain('data-charges="1"');
    expect(searchesSince(from)).toBe(2);

    const limited = await page();
    expect(limited.status).toBe(200);
    const html = await limited.text();
    expect(html).not.toContain('data-charges="1"');
    expect(html).toContain("Not counted: too many lookups");
    expect(searchesSince(from)).toBe(2);
  });
});

describe("the ledger page's refund checks", () => {
  it("lists each paid order's refunds at the provider after counting its charges, and checks none when the window has no room left for them", async () => {
    const session = await browserSession(app.baseUrl);
    const paid = await checkout(
      { Cookie: session.cookie, "Sec-Fetch-Site": "same-origin" },
      randomUUID(),
    );
    expect(paid.status).toBe(201);
    const from = recorder.requests().length;
    const refundListsSince = () => askedSince(from, "GET", "/v1/refunds");
    const page = () => fetch(`${app.baseUrl}/orders`, { headers: { Cookie: session.cookie } });

    // One search for the charge, then one list of the order's refunds: two of the three reads.
    const checked = await page();
    expect(checked.status).toBe(200);
    const html = await checked.text();
    expect(html).toContain('data-charges="1"');
    expect(html).toContain('data-verdict="none"');
    expect([searchesSince(from), refundListsSince()]).toEqual([1, 1]);

    // The last read goes to the charge count; the refunds are left unchecked, and not asked for.
    const limited = await (await page()).text();
    expect(limited).toContain('data-charges="1"');
    expect(limited).toContain('data-verdict="unchecked"');
    expect([searchesSince(from), refundListsSince()]).toEqual([2, 1]);
  });
});

describe("the lab's endpoints per account", () => {
  it(`serves ${LAB_REQUESTS} requests a window, then answers 429 with Retry-After, a strategy's checkout included, which charges nothing`, async () => {
    const account = await createAccount(app.baseUrl);
    let storm: StormReport | undefined;
    for (let request = 0; request < LAB_REQUESTS; request++)
      storm = await startLabStorm(account.token, app.baseUrl);
    const from = recorder.requests().length;

    const refused = await fetch(`${app.baseUrl}/api/lab/storms`, {
      method: "POST",
      headers: { Authorization: `Bearer ${account.token}`, "Content-Type": "application/json" },
      body: JSON.stringify({ strategy: "no_key", size: 2 }),
    });
    await expectRateLimited(refused, /lab/);
    const charge = await fetch(`${app.baseUrl}${storm!.request.path}`, {
      method: "POST",
      headers: { ...storm!.request.headers, Authorization: `Bearer ${account.token}` },
      body: JSON.stringify(storm!.request.body),
    });
    await expectRateLimited(charge, /lab/);
    expect(askedSince(from, "POST", "/v1/payment_intents")).toBe(0);

    // The shop's own checkout is not the lab's: its limit is its own.
    expect(
      (await checkout({ Authorization: `Bearer ${account.token}` }, randomUUID())).status,
    ).toBe(201);
  });
});
