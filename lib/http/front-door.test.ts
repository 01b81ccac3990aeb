import { describe, expect, it } from "vitest";
import {
  dropInternalHeaders,
  expectationFailedAnswer,
  forwardedFor,
  frontDoor,
  type FrontDoorAnswer,
} from "@/lib/http/front-door";
import { METRICS_DOT_SEGMENT_SPELLINGS } from "@/lib/testing/bad-input-corpus";

const HOST = "127.0.0.1:3000";

function decide(method: string, target: string, headers: Record<string, string> = {}) {
  return frontDoor({ method, target, headers: { host: HOST, ...headers } });
}

function refusal(method: string, target: string, headers?: Record<string, string>) {
  const decision = decide(method, target, headers);
  return decision.kind === "answer" ? decision.answer : undefined;
}

function expectProblem(answer: FrontDoorAnswer | undefined, status: number, slug: string) {
  expect(answer?.status).toBe(status);
  expect(JSON.parse(answer!.body)).toMatchObject({ type: `/problems/${slug}`, status });
  expect(answer?.headers["Content-Type"]).toBe("application/problem+json");
  expect(answer?.headers["X-Content-Type-Options"]).toBe("nosniff");
  expect(answer?.headers["X-Request-Id"]).toMatch(/^[0-9a-f-]{36}$/);
}

describe("the front door", () => {
  it.each([
    "/api/orders/%ZZ",
    "/api/keys/%E0%A4%A",
    "/api/lab/storms/%C0%AF",
    "/keys/%E0%A4%A",
    `http://${HOST}/api/orders/%ZZ?x=1`,
  ])("refuses %s, a path that does not percent-decode, with 400 malformed-path", (target) => {
    expectProblem(refusal("GET", target), 400, "malformed-path");
  });

  it.each(["/", "/api/orders/ord_1", "/keys/caf%C3%A9", "/api/orders?cursor=%ZZ"])(
    "passes %s on to Next.js as it is",
    (target) => {
      expect(decide("GET", target)).toEqual({ kind: "pass", target });
    },
  );

  it("passes a target in absolute form that names this host on in origin form", () => {
    expect(decide("GET", `http://${HOST}/api/health?x=1`)).toEqual({
      kind: "pass",
      target: "/api/health?x=1",
    });
    expect(decide("POST", "HTTP://127.0.0.1:3000/api/orders")).toEqual({
      kind: "pass",
      target: "/api/orders",
    });
  });

  it.each([
    "http://evil.example/api/health",
    "http://127.0.0.1:3001/api/health",
    "file:///etc/passwd",
    "javascript:alert(1)",
    "evil.example:80",
  ])(
    "answers %s, a target of another host or scheme, with 421: never a redirect there",
    (target) => {
      const answer = refusal("GET", target);
      expectProblem(answer, 421, "misdirected-request");
      expect(answer?.headers.Location).toBeUndefined();
    },
  );

  it("answers OPTIONS * with 204 and what the server answers; * with any other method is a 400", () => {
    const options = refusal("OPTIONS", "*");
    expect(options).toMatchObject({
      status: 204,
      body: "",
      headers: { Allow: "GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS" },
    });
    expect(options?.headers["X-Request-Id"]).toMatch(/^[0-9a-f-]{36}$/);
    for (const method of ["GET", "POST", "DELETE"])
      expectProblem(refusal(method, "*"), 400, "malformed-path");
  });

  it.each([
    ...METRICS_DOT_SEGMENT_SPELLINGS,
    "/api/.%2E/orders",
    "/api/orders/..",
    `http://${HOST}/x/../api/metrics`,
  ])("refuses %s, a path with a dot segment, with 400 malformed-path", (target) => {
    expectProblem(refusal("GET", target), 400, "malformed-path");
  });

  it.each(["/keys/a.b", "/api/orders/..x", "/.well-known/security.txt", "/api/health?next=/../x"])(
    "passes %s on: dots that are not a whole segment, or are in the query",
    (target) => {
      expect(decide("GET", target)).toEqual({ kind: "pass", target });
    },
  );

  it("says why it refuses an expectation, with 417", () => {
    const answer = expectationFailedAnswer({ expect: "foo" });
    expectProblem(answer, 417, "expectation-failed");
    expect(JSON.parse(answer.body).detail).toContain('"foo"');
  });

  it("drops the request headers that steer Next.js, and only those", () => {
    const headers = {
      "x-middleware-prefetch": "1",
      "x-middleware-subrequest": "middleware",
      "x-invoke-path": "/api/metrics",
      "x-matched-path": "/api/health",
      "x-now-route-matches": "1",
      "x-nextjs-data": "1",
      "next-resume": "1",
      "x-prerender-revalidate": "x",
      rsc: "1",
      "next-router-state-tree": "%5B%5D",
      "x-request-id": "4f0e0b4c-0d6a-4a57-9d36-0d3f0b9c2a11",
      "idempotency-key": "k",
    };
    dropInternalHeaders(headers);
    expect(Object.keys(headers).sort()).toEqual(
      ["idempotency-key", "next-router-state-tree", "rsc", "x-request-id"].sort(),
    );
  });

  it.each(["TRACE", "PROPFIND", "SEARCH", "PURGE", "LINK"])(
    "refuses %s, which Next.js's router cannot take, with 405 and Allow",
    (method) => {
      const answer = refusal(method, "/api/orders");
      expect(answer?.status).toBe(405);
      expect(answer?.headers.Allow).toBe("GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS");
      expect(JSON.parse(answer!.body)).toMatchObject({
        type: "/problems/method-not-allowed",
      });
    },
  );

  it("keeps a well-formed balancer request id and replaces anything else", () => {
    const kept = refusal("TRACE", "/", { "x-request-id": "4f0e0b4c-0d6a-4a57-9d36-0d3f0b9c2a11" });
    expect(kept?.headers["X-Request-Id"]).toBe("4f0e0b4c-0d6a-4a57-9d36-0d3f0b9c2a11");
    const replaced = refusal("TRACE", "/", { "x-request-id": "<script>" });
    expect(replaced?.headers["X-Request-Id"]).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("appends the peer to X-Forwarded-For, after whatever the caller or a proxy wrote", () => {
    expect(forwardedFor("6.6.6.6, 10.0.0.1", "127.0.0.1")).toBe("6.6.6.6, 10.0.0.1, 127.0.0.1");
    expect(forwardedFor(undefined, "::1")).toBe("::1");
    expect(forwardedFor(undefined, undefined)).toBe("unknown");
  });
});
