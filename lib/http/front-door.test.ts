import { describe, expect, it } from "vitest";
import { forwardedFor, refusalFor } from "@/lib/http/front-door";

function refusal(method: string, target: string) {
  return refusalFor({ method, target, headers: {} });
}

describe("the front door", () => {
  it.each([
    "/api/orders/%ZZ",
    "/api/keys/%E0%A4%A",
    "/api/lab/storms/%C0%AF",
    "/keys/%E0%A4%A",
    "http://shop.example/api/orders/%ZZ?x=1",
  ])("refuses %s, a path that does not percent-decode, with 400 malformed-path", (target) => {
    const answer = refusal("GET", target);
    expect(answer?.status).toBe(400);
    expect(JSON.parse(answer!.body)).toMatchObject({
      type: "urn:oncepay:problem:malformed-path",
      status: 400,
    });
    expect(answer?.headers["Content-Type"]).toBe("application/problem+json");
  });

  it.each(["/", "/api/orders/ord_1", "/keys/caf%C3%A9", "/api/orders?cursor=%ZZ", "*"])(
    "passes %s on to Next.js",
    (target) => {
      expect(refusal("GET", target)).toBeUndefined();
    },
  );

  it.each(["TRACE", "PROPFIND", "SEARCH", "PURGE", "LINK"])(
    "refuses %s, which Next.js's router cannot take, with 405 and Allow",
    (method) => {
      const answer = refusal(method, "/api/orders");
      expect(answer?.status).toBe(405);
      expect(answer?.headers.Allow).toBe("GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS");
      expect(JSON.parse(answer!.body)).toMatchObject({
        type: "urn:oncepay:problem:method-not-allowed",
      });
    },
  );

  it("keeps a well-formed balancer request id and replaces anything else", () => {
    const kept = refusalFor({
      method: "TRACE",
      target: "/",
      headers: { "x-request-id": "4f0e0b4c-0d6a-4a57-9d36-0d3f0b9c2a11" },
    });
    expect(kept?.headers["X-Request-Id"]).toBe("4f0e0b4c-0d6a-4a57-9d36-0d3f0b9c2a11");
    const replaced = refusalFor({
      method: "TRACE",
      target: "/",
      headers: { "x-request-id": "<script>" },
    });
    expect(replaced?.headers["X-Request-Id"]).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("appends the peer to X-Forwarded-For, after whatever the caller or a proxy wrote", () => {
    expect(forwardedFor("6.6.6.6, 10.0.0.1", "127.0.0.1")).toBe("6.6.6.6, 10.0.0.1, 127.0.0.1");
    expect(forwardedFor(undefined, "::1")).toBe("::1");
    expect(forwardedFor(undefined, undefined)).toBe("unknown");
  });
});
