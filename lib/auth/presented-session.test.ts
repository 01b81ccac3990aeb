import { describe, expect, it } from "vitest";
import { expireTossedSessionCookies, presentedSession } from "@/lib/auth/presented-session";

describe("presentedSession", () => {
  it("reads none, one, or several cookies of the name, whatever else the header holds", () => {
    expect(presentedSession(null, "oncepay_session")).toEqual({ kind: "none" });
    expect(presentedSession("theme=dark", "oncepay_session")).toEqual({ kind: "none" });
    expect(presentedSession("theme=dark; oncepay_session=ops_a.b", "oncepay_session")).toEqual({
      kind: "one",
      token: "ops_a.b",
    });
    // A name is matched whole: neither a prefix nor the __Host- form counts.
    expect(
      presentedSession("oncepay_session_old=x; __Host-oncepay_session=y", "oncepay_session"),
    ).toEqual({ kind: "none" });
  });

  it("trusts neither of two, in either order, equal or not", () => {
    for (const header of [
      "oncepay_session=ops_planted.x; oncepay_session=ops_ours.y",
      "oncepay_session=ops_ours.y; theme=dark; oncepay_session=ops_planted.x",
      "oncepay_session=same;oncepay_session=same",
      "oncepay_session=forged; oncepay_session=ops_ours.y",
    ])
      expect(presentedSession(header, "oncepay_session"), header).toEqual({ kind: "several" });
  });
});

const requestTo = (url: string, host = new URL(url).host) => ({
  url,
  headers: new Headers({ host }),
});

describe("expireTossedSessionCookies", () => {
  const paths = (cookies: string[]) => cookies.map((cookie) => /Path=([^;]*)/.exec(cookie)![1]);

  it("on an address: every narrower path that reaches the URL, never our own Path=/", () => {
    const cookies = expireTossedSessionCookies(requestTo("http://127.0.0.1:3000/api/orders"));

    expect(paths(cookies)).toEqual(["/api", "/api/", "/api/orders"]);
    for (const cookie of cookies) {
      expect(cookie).toMatch(/^oncepay_session=; /);
      expect(cookie).toContain("Max-Age=0");
      expect(cookie).not.toContain("Domain=");
    }
  });

  it("on a named host: also each domain a sibling or the host could name, on every path", () => {
    const cookies = expireTossedSessionCookies(
      // Behind a balancer the server's own URL names another host: the browser's Host counts.
      requestTo("http://10.0.0.7:3000/orders/", "shop.example.com"),
    );

    expect(cookies.filter((cookie) => !cookie.includes("Domain="))).toHaveLength(2);
    for (const domain of ["shop.example.com", "example.com"])
      expect(paths(cookies.filter((cookie) => cookie.includes(`Domain=${domain};`)))).toEqual([
        "/",
        "/orders",
        "/orders/",
      ]);
    expect(cookies.some((cookie) => cookie.includes("Domain=com;"))).toBe(false);
  });

  it("names no path a Set-Cookie attribute could be broken by, and stops at a depth", () => {
    const tricky = expireTossedSessionCookies(
      requestTo("http://127.0.0.1/api;Domain=evil.example/x"),
    );
    expect(tricky).toEqual([]);

    const deep = expireTossedSessionCookies(requestTo(`http://127.0.0.1/${"a/".repeat(50)}`));
    expect(deep.length).toBeLessThanOrEqual(16);
  });
});
