import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  baseUrl,
  cartBody,
  createAccount,
  postOrder,
  type ApiAccount,
} from "@/lib/testing/api-client";
import { postUnsafeOrder } from "@/lib/testing/api-client-demo";
import { LAB_PROVIDER_KEY_PREFIX } from "@/lib/lab/charge-tags";
import { closeTestDb, countRows, keyRow, providerIntents, testDb } from "@/lib/testing/database";

/**
 * What a hostile client tried, and what must hold: a clear 4xx, nothing
 * claimed, stored or charged, and the same key still usable afterwards.
 */
let account: ApiAccount;

beforeAll(async () => {
  account = await createAccount();
});
afterAll(closeTestDb);

async function labCharges(): Promise<number> {
  return (await providerIntents({ keyPrefix: LAB_PROVIDER_KEY_PREFIX })).total;
}

describe("what a key keeps of its request", () => {
  it("the request as the checkout reads it: a client's extra fields are neither stored nor lost from the fingerprint", async () => {
    const key = randomUUID();
    const extras = "x".repeat(12_000);
    const body = {
      ...cartBody(),
      note: extras,
      items: [{ sku: "mug-ceramic-350", quantity: 2, engraving: extras.slice(0, 2000) }],
    };
    const paid = await postOrder({ token: account.token, key, body });
    expect(paid.response.status, paid.text).toBe(201);

    const row = await keyRow(account.id, key);
    expect(row?.request).toEqual({
      cartId: body.cartId,
      items: [{ sku: "mug-ceramic-350", quantity: 2 }],
      paymentMethod: "pm_card_visa",
    });
    expect(JSON.stringify(row?.request).length).toBeLessThan(200);
    // The fingerprint covers the body as sent: the same key without the extras is another request.
    const other = await postOrder({ token: account.token, key, body: { ...body, note: "" } });
    expect(other.response.status).toBe(422);
  });
});

describe("JSON the server cannot store or hash", () => {
  const valid = JSON.stringify(cartBody());
  const withExtra = (extra: string) => `${valid.slice(0, -1)},"extra":${extra}}`;

  it.each([
    ["a NUL in an unknown field", withExtra('"a\\u0000b"'), "U+0000"],
    ["a NUL in the cart id", JSON.stringify(cartBody({ cartId: "cart\u0000" })), "U+0000"],
    ["a lone surrogate in a value", withExtra('"\\ud800"'), "surrogate"],
    ["a lone surrogate in an object key", withExtra('{"\\udc00":1}'), "surrogate"],
    ["a number that overflows to Infinity", withExtra("1e400"), "finite"],
    [
      "arrays nested 5000 levels deep",
      withExtra(`${"[".repeat(5000)}${"]".repeat(5000)}`),
      "levels deep",
    ],
  ])(
    "answers 400 unacceptable-json for %s, claims nothing, and the key works afterwards",
    async (_case, rawBody, rule) => {
      const key = randomUUID();
      const refused = await postOrder({ token: account.token, key, rawBody });

      expect(refused.response.status).toBe(400);
      expect(refused.response.headers.get("content-type")).toBe("application/problem+json");
      expect(JSON.parse(refused.text)).toMatchObject({
        type: "/problems/unacceptable-json",
        status: 400,
        detail: expect.stringContaining(rule),
      });
      expect(await keyRow(account.id, key)).toBeUndefined();

      const orders = await countRows("orders", account.id);
      const paid = await postOrder({ token: account.token, key, rawBody: valid });
      expect(paid.response.status).toBe(201);
      expect(await countRows("orders", account.id)).toBe(orders + 1);
    },
  );

  it("the lab's keyless endpoint refuses it too, before it charges anything", async () => {
    const before = await labCharges();
    const response = await postUnsafeOrder({
      token: account.token,
      body: cartBody({ cartId: "lab\u0000" }),
    });

    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ type: "/problems/unacceptable-json" });
    expect(await labCharges()).toBe(before);
  });
});

describe("crash faults on a server that does not allow them", () => {
  it("ignores OncePay-Fault: crash-after-claim: the server stays up and the checkout is paid", async () => {
    const paid = await postOrder({
      token: account.token,
      key: randomUUID(),
      headers: { "OncePay-Fault": "crash-after-claim" },
    });

    expect(paid.response.status).toBe(201);
    expect((await fetch(`${baseUrl()}/api/products`)).status).toBe(200);
  });
});

describe("the shop page", () => {
  it("hands a first visitor a session only on a private, uncached response", async () => {
    const response = await fetch(`${baseUrl()}/`);

    expect(response.status).toBe(200);
    expect(response.headers.get("set-cookie")).toMatch(/^oncepay_session=ops_/);
    expect(response.headers.get("cache-control")).toMatch(/private/);
    expect(response.headers.get("cache-control")).toMatch(/no-store/);
    expect(response.headers.get("cache-control")).not.toMatch(/s-maxage/);
  });

  it.each(["/keys/x.txt", "/keys/x.png", "/keys/x.svg", "/keys/x.ico", "/orders.txt"])(
    "treats %s as the page it names: a CSP and a session, as every page gets",
    async (path) => {
      const response = await fetch(`${baseUrl()}${path}`);

      expect(response.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
      expect(response.headers.get("set-cookie")).toMatch(/^oncepay_session=ops_/);
      expect(response.headers.get("cache-control")).toMatch(/private/);
    },
  );

  it.each(["/orders", "/keys/some-key", "/"])(
    "answers the flight data (RSC) of %s, which carries the account's data, private, no-store and varying on RSC",
    async (path) => {
      const cookie = (await fetch(`${baseUrl()}/`)).headers.get("set-cookie")!.split(";")[0]!;
      const response = await fetch(`${baseUrl()}${path}`, {
        headers: { Cookie: cookie, RSC: "1" },
      });

      expect(response.status).toBe(200);
      expect(response.headers.get("content-type")).toMatch(/^text\/x-component/);
      expect(response.headers.get("cache-control")).toMatch(/private/);
      expect(response.headers.get("cache-control")).toMatch(/no-store/);
      expect(response.headers.get("vary")?.toLowerCase()).toMatch(/(^|,\s*)rsc(,|$)/);
    },
  );

  it("carries a CSP with a fresh script nonce and frame-ancestors 'none', and the other security headers", async () => {
    const [first, second] = await Promise.all([fetch(`${baseUrl()}/`), fetch(`${baseUrl()}/`)]);
    const nonceOf = (csp: string | null) => /'nonce-([^']+)'/.exec(csp ?? "")?.[1];
    const csp = first.headers.get("content-security-policy");

    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("object-src 'none'");
    expect(nonceOf(csp)).toBeDefined();
    expect(nonceOf(second.headers.get("content-security-policy"))).not.toBe(nonceOf(csp));
    expect(await first.text()).toContain(`nonce="${nonceOf(csp)}"`);
    expect(first.headers.get("x-content-type-options")).toBe("nosniff");
    expect(first.headers.get("referrer-policy")).toBe("strict-origin-when-cross-origin");
    expect(first.headers.get("permissions-policy")).toContain("camera=()");
  });

  it("marks the session cookie Secure when the page was served over HTTPS (a TLS-terminating proxy says so)", async () => {
    const overHttps = await fetch(`${baseUrl()}/`, { headers: { "X-Forwarded-Proto": "https" } });
    const overHttp = await fetch(`${baseUrl()}/`);

    expect(overHttps.headers.get("set-cookie")).toMatch(/;\s*Secure/i);
    expect(overHttp.headers.get("set-cookie")).not.toMatch(/;\s*Secure/i);
  });
});

describe("cookie-authenticated requests from another site", () => {
  async function sessionCookie(): Promise<string> {
    const cookie = (await fetch(`${baseUrl()}/`)).headers.get("set-cookie") ?? "";
    return cookie.split(";")[0]!;
  }

  it.each([
    ["Sec-Fetch-Site: cross-site", { "Sec-Fetch-Site": "cross-site" }],
    ["a foreign Origin", { Origin: "https://evil.example" }],
  ])("refuses a checkout with %s: 403 before any key is claimed", async (_case, headers) => {
    const key = randomUUID();
    const refused = await postOrder({
      key,
      headers: { Cookie: await sessionCookie(), ...headers },
    });

    expect(refused.response.status).toBe(403);
    expect(JSON.parse(refused.text)).toMatchObject({
      type: "/problems/cross-site-request",
      status: 403,
    });
    const { rows } = await testDb().query(
      `SELECT count(*)::int AS n FROM idempotency_keys WHERE idem_key = $1`,
      [key],
    );
    expect(rows[0].n).toBe(0);
  });

  it("accepts the shop's own page (Sec-Fetch-Site: same-origin)", async () => {
    const paid = await postOrder({
      key: randomUUID(),
      headers: { Cookie: await sessionCookie(), "Sec-Fetch-Site": "same-origin" },
    });
    expect(paid.response.status).toBe(201);
  });
});

describe("methods an endpoint does not serve", () => {
  it.each([
    ["PUT", "/api/orders", "GET, POST, HEAD, OPTIONS"],
    ["POST", "/api/lab/storms/00000000-0000-4000-8000-000000000000", "GET, HEAD, OPTIONS"],
    ["DELETE", "/api/keys/some-key", "GET, HEAD, OPTIONS"],
    ["DELETE", "/api/products", "GET, HEAD, OPTIONS"],
    ["POST", `/api/orders/${randomUUID()}`, "GET, HEAD, OPTIONS"],
    ["PATCH", "/api/demo/settings", "GET, PUT, HEAD, OPTIONS"],
  ])("%s %s answers 405 problem+json with Allow and a request id", async (method, path, allow) => {
    const response = await fetch(`${baseUrl()}${path}`, { method });

    expect(response.status).toBe(405);
    expect(response.headers.get("allow")).toBe(allow);
    expect(response.headers.get("content-type")).toBe("application/problem+json");
    expect(response.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    expect(await response.json()).toMatchObject({
      type: "/problems/method-not-allowed",
      status: 405,
    });
  });

  it("OPTIONS answers 204 with the same Allow", async () => {
    const response = await fetch(`${baseUrl()}/api/orders`, { method: "OPTIONS" });
    expect(response.status).toBe(204);
    expect(response.headers.get("allow")).toBe("GET, POST, HEAD, OPTIONS");
  });
});
