import { describe, expect, it } from "vitest";
import { outcomeToResponse, type Outcome } from "@/lib/idempotency/outcomes";

async function problemOf(outcome: Outcome) {
  const response = outcomeToResponse(outcome);
  return {
    status: response.status,
    headers: response.headers,
    body: (await response.json()) as Record<string, unknown>,
  };
}

describe("outcomeToResponse", () => {
  it.each([
    [{ kind: "unauthenticated", detail: "no token" }, 401],
    [{ kind: "cross-site", detail: "Origin: https://evil.example" }, 403],
    [{ kind: "key-missing", detail: "missing" }, 400],
    [{ kind: "key-invalid", detail: "bad" }, 400],
    [{ kind: "key-repeated", detail: "twice" }, 400],
    [{ kind: "unsupported-media-type", detail: "xml" }, 415],
    [{ kind: "body-too-large", detail: "big" }, 413],
    [{ kind: "body-incomplete", detail: "gone" }, 400],
    [{ kind: "malformed-json", detail: "{" }, 400],
    [{ kind: "unacceptable-json", detail: "NUL" }, 400],
    [{ kind: "invalid-body", detail: "items", errors: [] }, 400],
    [{ kind: "in-flight", retryAfterSeconds: 1 }, 409],
    [{ kind: "fingerprint-mismatch" }, 422],
    [{ kind: "lease-lost", retryAfterSeconds: 1 }, 409],
    [{ kind: "database-unavailable", retryAfterSeconds: 2 }, 503],
    [{ kind: "internal-error" }, 500],
    [{ kind: "dependency-rejected", detail: "refused" }, 502],
    [{ kind: "dependency-unavailable", detail: "no answer", retryAfterSeconds: 1 }, 503],
  ] as [Outcome, number][])("maps %o to a %i problem+json", async (outcome, status) => {
    const problem = await problemOf(outcome);
    expect(problem.status).toBe(status);
    expect(problem.headers.get("content-type")).toBe("application/problem+json");
    expect(problem.body).toMatchObject({
      status,
      type: expect.stringMatching(/^\/problems\//),
      title: expect.any(String),
      detail: expect.any(String),
    });
  });

  it("tells a 409 and a 503 when to retry", async () => {
    expect(
      (await problemOf({ kind: "in-flight", retryAfterSeconds: 3 })).headers.get("retry-after"),
    ).toBe("3");
    expect(
      (await problemOf({ kind: "database-unavailable", retryAfterSeconds: 2 })).headers.get(
        "retry-after",
      ),
    ).toBe("2");
  });

  it("asks for credentials on a 401", async () => {
    expect(
      (await problemOf({ kind: "unauthenticated", detail: "x" })).headers.get("www-authenticate"),
    ).toMatch(/^Bearer/);
  });

  it("lists the field errors of an invalid body", async () => {
    const errors = [{ path: "items.0.quantity", message: "too big" }];
    expect((await problemOf({ kind: "invalid-body", detail: "x", errors })).body.errors).toEqual(
      errors,
    );
  });

  it("replays a stored response byte for byte, marked as a replay", async () => {
    const stored = {
      status: 201,
      headers: { "Content-Type": "application/json", Location: "/api/orders/1" },
      body: { b: 1, a: [2, 3] },
    };
    const lifetime = {
      expiresAt: new Date("2026-12-08T09:00:00.750Z"),
      retentionSeconds: 86_400,
      leaseSeconds: 30,
    };
    const first = outcomeToResponse({ kind: "completed", stored, lifetime });
    const replay = outcomeToResponse({
      kind: "replay",
      stored: { ...stored, body: { a: [2, 3], b: 1 } },
      lifetime,
    });
    expect(replay.status).toBe(201);
    expect(replay.headers.get("location")).toBe("/api/orders/1");
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    expect(await replay.text()).toBe(await first.text());
    for (const response of [first, replay]) {
      expect(response.headers.get("idempotency-key-expires")).toBe("Tue, 08 Dec 2026 09:00:00 GMT");
      expect(response.headers.get("idempotency-key-policy")).toBe("retention=86400, lease=30");
    }
  });

  it("tells the key's lifetime on a 409 and a 422, and none where the key was not kept", () => {
    const lifetime = {
      expiresAt: new Date("2026-12-08T09:00:00Z"),
      retentionSeconds: 60,
      leaseSeconds: 5,
    };
    const inFlight = outcomeToResponse({ kind: "in-flight", retryAfterSeconds: 1, lifetime });
    const reused = outcomeToResponse({ kind: "fingerprint-mismatch", lifetime });
    for (const response of [inFlight, reused])
      expect(response.headers.get("idempotency-key-policy")).toBe("retention=60, lease=5");
    const failed = outcomeToResponse({ kind: "internal-error" });
    expect(failed.headers.get("idempotency-key-expires")).toBeNull();
  });
});
