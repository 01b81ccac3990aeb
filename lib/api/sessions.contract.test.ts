import { randomBytes } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { hashToken } from "@/lib/auth/accounts";
import { baseUrl, browserSession, cartBody } from "@/lib/testing/api-client";
import { accountIdByTokenHash, closeTestDb, rowCounts } from "@/lib/testing/database";

/**
 * Only the server mints sessions: a cookie whose token it did not sign (one
 * planted by a sibling site, a tossed one, an old unsigned one) is never an
 * account, and the next page load replaces it, so the browser works again.
 */
afterAll(closeTestDb);

const b64 = () => randomBytes(32).toString("base64url");
const FORGED = {
  "well-formed, signed with another key": `ops_${b64()}.${b64()}`,
  "unsigned, in the form sessions had before they were signed": `ops_${b64()}`,
  malformed: "not-a-session",
};

async function pageLoad(cookie: string): Promise<Response> {
  return fetch(`${baseUrl()}/`, { headers: { Cookie: cookie } });
}

function checkout(cookie: string): Promise<Response> {
  return fetch(`${baseUrl()}/api/orders`, {
    method: "POST",
    headers: {
      Cookie: cookie,
      "Content-Type": "application/json",
      "Idempotency-Key": crypto.randomUUID(),
    },
    body: JSON.stringify(cartBody()),
  });
}

describe.each(Object.entries(FORGED))(
  "a session cookie the server never issued (%s)",
  (_name, token) => {
    const cookie = `oncepay_session=${token}`;

    it("is refused by the API (401) and never becomes an account", async () => {
      const response = await checkout(cookie);

      expect(response.status).toBe(401);
      expect(await response.json()).toMatchObject({
        detail: expect.stringContaining("Reload the shop"),
      });
      expect(await accountIdByTokenHash(hashToken(token))).toBeUndefined();
    });

    it("is replaced on the next page load, with a session the API accepts", async () => {
      const response = await pageLoad(cookie);

      expect(response.status).toBe(200);
      const replaced = response.headers.get("set-cookie")?.split(";")[0];
      expect(replaced).toMatch(/^oncepay_session=ops_/);
      expect(replaced).not.toBe(cookie);
      expect((await checkout(replaced!)).status).toBe(201);
    });
  },
);

describe("a session the server issued", () => {
  it("is kept across page loads: no new cookie, and its account pays", async () => {
    const { cookie } = await browserSession();

    expect((await pageLoad(cookie)).headers.get("set-cookie")).toBeNull();
    expect((await checkout(cookie)).status).toBe(201);
  });

  it("is not accepted with its signature altered", async () => {
    const { cookie } = await browserSession();
    const altered = cookie.slice(0, -2) + (cookie.endsWith("AA") ? "BB" : "AA");

    expect((await checkout(altered)).status).toBe(401);
  });

  it("is named __Host-oncepay_session, Secure, when the page is served over HTTPS", async () => {
    const response = await fetch(`${baseUrl()}/`, { headers: { "X-Forwarded-Proto": "https" } });
    const setCookie = response.headers.get("set-cookie") ?? "";

    expect(setCookie).toMatch(/^__Host-oncepay_session=ops_/);
    expect(setCookie).toMatch(/; Secure/i);
    expect(setCookie).toMatch(/; Path=\//i);
    expect(setCookie).not.toMatch(/Domain=/i);
  });
});

/**
 * Cookies are not separated by port, and a sibling subdomain can set one for
 * the parent domain: a neighbour can toss a second oncepay_session in, for
 * Path=/api, so that the API gets both and the pages ours alone. Whichever
 * comes first, the request is trusted as neither, and its answer expires
 * every cookie of the name but ours (ours is host-only, Path=/).
 */
describe("two session cookies at once (a neighbour tossed one in)", () => {
  async function payingSession() {
    const session = await browserSession();
    expect((await checkout(session.cookie)).status).toBe(201);
    const accountId = (await accountIdByTokenHash(hashToken(session.token)))!;
    return { ...session, accountId };
  }

  const expiredPaths = (response: Response) =>
    response.headers
      .getSetCookie()
      .map((cookie) => /^oncepay_session=; Path=([^;]+);.*Max-Age=0/.exec(cookie)?.[1]);

  it.each([
    ["the shopper's first", (shopper: string, neighbour: string) => `${shopper}; ${neighbour}`],
    ["the neighbour's first", (shopper: string, neighbour: string) => `${neighbour}; ${shopper}`],
  ])(
    "both the server's, %s: the API refuses (401), pays into neither account, and expires the tossed paths",
    async (_order, both) => {
      const shopper = await payingSession();
      const neighbour = await payingSession();

      const response = await checkout(both(shopper.cookie, neighbour.cookie));

      expect(response.status).toBe(401);
      expect(((await response.json()) as { detail: string }).detail).toContain(
        "more than one session cookie",
      );
      expect(expiredPaths(response)).toEqual(["/api", "/api/", "/api/orders"]);
      expect(await rowCounts(shopper.accountId)).toEqual({ orders: 1, payments: 1 });
      expect(await rowCounts(neighbour.accountId)).toEqual({ orders: 1, payments: 1 });
      // Nor may the neighbour read the shopper's orders through the mix.
      const listed = await fetch(`${baseUrl()}/api/orders`, {
        headers: { Cookie: both(shopper.cookie, neighbour.cookie) },
      });
      expect(listed.status).toBe(401);
    },
  );

  it("a forged one first no longer locks the shopper out: refused once, then ours alone pays", async () => {
    const shopper = await payingSession();

    const response = await checkout(`oncepay_session=forged; ${shopper.cookie}`);
    expect(response.status).toBe(401);
    expect(expiredPaths(response)).toContain("/api");

    // What the browser sends once the answer has expired the tossed cookie.
    expect((await checkout(shopper.cookie)).status).toBe(201);
    expect(await rowCounts(shopper.accountId)).toEqual({ orders: 2, payments: 2 });
  });

  it("a page load with two shows neither account, mints nothing, and expires the tossed ones", async () => {
    const shopper = await payingSession();
    const neighbour = await payingSession();
    const listed = (await (
      await fetch(`${baseUrl()}/api/orders`, { headers: { Cookie: shopper.cookie } })
    ).json()) as { data: { id: string }[] };
    const order = listed.data[0];
    const ordersPage = (cookie: string) =>
      fetch(`${baseUrl()}/orders`, { headers: { Cookie: cookie } });

    expect(await (await ordersPage(shopper.cookie)).text()).toContain(order!.id);
    const mixed = await ordersPage(`${neighbour.cookie}; ${shopper.cookie}`);

    expect(mixed.status).toBe(200);
    expect(await mixed.text()).not.toContain(order!.id);
    expect(mixed.headers.getSetCookie().some((cookie) => /=ops_/.test(cookie))).toBe(false);
    expect(expiredPaths(mixed)).toEqual(["/orders"]);
    expect(mixed.headers.get("cache-control")).toContain("no-store");
  });
});
