import { describe, expect, it } from "vitest";
import { keyRequestAnswerOf } from "@/lib/idempotency/key-requests";
import type { Outcome } from "@/lib/idempotency/outcomes";

const stored = { status: 201, headers: {}, body: {} };
const lifetime = {
  expiresAt: new Date("2026-12-08T09:00:00Z"),
  retentionSeconds: 86_400,
  leaseSeconds: 30,
};

describe("how a checkout's outcome is recorded under the key it presented", () => {
  it.each<[string, Outcome, { answer: string; status: number } | undefined]>([
    [
      "the first attempt's 201",
      { kind: "completed", stored, lifetime },
      { answer: "completed", status: 201 },
    ],
    ["a replay", { kind: "replay", stored, lifetime }, { answer: "replay", status: 201 }],
    [
      "a 409 while another attempt holds the key",
      { kind: "in-flight", retryAfterSeconds: 1 },
      { answer: "conflict", status: 409 },
    ],
    [
      "a 409 after the lease was lost",
      { kind: "lease-lost", retryAfterSeconds: 1 },
      { answer: "conflict", status: 409 },
    ],
    ["a 422", { kind: "fingerprint-mismatch", lifetime }, { answer: "mismatch", status: 422 }],
    ["a 502", { kind: "dependency-rejected", detail: "no" }, { answer: "failed", status: 502 }],
    [
      "a 503",
      { kind: "database-unavailable", retryAfterSeconds: 5 },
      { answer: "failed", status: 503 },
    ],
    ["a 500", { kind: "internal-error" }, { answer: "failed", status: 500 }],
    [
      "a 400 for the body",
      { kind: "malformed-json", detail: "no" },
      { answer: "rejected", status: 400 },
    ],
    ["a 401, which names no account", { kind: "unauthenticated", detail: "no" }, undefined],
    ["a 400 for the key itself", { kind: "key-invalid", detail: "no" }, undefined],
  ])("%s", (_case, outcome, expected) => {
    expect(keyRequestAnswerOf(outcome)).toEqual(expected);
  });

  it("records a completed answer that broke off on the way as lost, with the status that never arrived", () => {
    expect(
      keyRequestAnswerOf({ kind: "completed", stored, lifetime }, { answerLost: true }),
    ).toEqual({
      answer: "lost",
      status: 201,
    });
  });
});
