import { describe, expect, it } from "vitest";
import { checkSameOrigin } from "@/lib/auth/same-origin";

function request(
  method: string,
  headers: Record<string, string>,
  url = "http://127.0.0.1:3000/api/orders",
) {
  return new Request(url, { method, headers });
}

describe("checkSameOrigin", () => {
  it("lets the shop's own pages through (Sec-Fetch-Site: same-origin)", () => {
    expect(
      checkSameOrigin(
        request("POST", { "sec-fetch-site": "same-origin", origin: "http://127.0.0.1:3000" }),
      ),
    ).toEqual({ ok: true });
  });

  it.each(["cross-site", "same-site"])(
    "refuses a POST with Sec-Fetch-Site: %s, whatever Origin says",
    (site) => {
      const check = checkSameOrigin(
        request("POST", { "sec-fetch-site": site, origin: "http://127.0.0.1:3000" }),
      );
      expect(check).toEqual({
        ok: false,
        detail: expect.stringContaining(`Sec-Fetch-Site: ${site}`),
      });
    },
  );

  it("falls back to Origin when a browser sends no Sec-Fetch-Site", () => {
    expect(
      checkSameOrigin(request("PUT", { origin: "http://127.0.0.1:3000", host: "127.0.0.1:3000" })),
    ).toEqual({ ok: true });
    expect(
      checkSameOrigin(
        request("POST", { origin: "https://shop.evil.example", host: "127.0.0.1:3000" }),
      ),
    ).toMatchObject({ ok: false });
  });

  it("compares Origin with the scheme a TLS-terminating proxy reports", () => {
    const behindProxy = {
      origin: "https://shop.example",
      host: "shop.example",
      "x-forwarded-proto": "https",
    };
    expect(
      checkSameOrigin(request("POST", behindProxy, "http://10.0.0.5:3000/api/orders")),
    ).toEqual({ ok: true });
    expect(
      checkSameOrigin(
        request(
          "POST",
          { ...behindProxy, origin: "http://shop.example" },
          "http://10.0.0.5:3000/api/orders",
        ),
      ),
    ).toMatchObject({ ok: false });
  });

  it("checks only requests that change something, and not those without any browser marks", () => {
    expect(checkSameOrigin(request("GET", { "sec-fetch-site": "cross-site" }))).toEqual({
      ok: true,
    });
    expect(checkSameOrigin(request("POST", {}))).toEqual({ ok: true });
  });
});
