import { randomBytes } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { hashToken } from "@/lib/auth/accounts";
import { baseUrl, browserSession, cartBody } from "@/lib/testing/api-client";
import { accountIdByTokenHash, closeTestDb } from "@/lib/testing/database";

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
