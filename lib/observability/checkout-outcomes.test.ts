import { describe, expect, it } from "vitest";
import { CHECKOUT_OUTCOMES, checkoutOutcomeOf } from "@/lib/observability/checkout-outcomes";
import type { StoredResponse } from "@oncepay/idempotency";

const stored = (status: number): StoredResponse => ({ status, headers: {}, body: {} });
const lifetime = {
  expiresAt: new Date("2026-12-08T09:00:00Z"),
  retentionSeconds: 86_400,
  leaseSeconds: 30,
};

describe("the checkout outcome a metric counts", () => {
  it("tells a created order from a declined card, and a replay of either from both", () => {
    expect(checkoutOutcomeOf({ kind: "completed", stored: stored(201), lifetime })).toBe("created");
    expect(checkoutOutcomeOf({ kind: "completed", stored: stored(402), lifetime })).toBe(
      "declined",
    );
    expect(checkoutOutcomeOf({ kind: "replay", stored: stored(402), lifetime })).toBe("replayed");
  });

  it("counts a lost lease as in flight, as the client sees it (409), and any malformed request as invalid", () => {
    expect(checkoutOutcomeOf({ kind: "lease-lost", retryAfterSeconds: 1 })).toBe("in_flight");
    expect(checkoutOutcomeOf({ kind: "key-missing", detail: "" })).toBe("invalid");
    expect(checkoutOutcomeOf({ kind: "body-too-large", detail: "" })).toBe("invalid");
  });

  it("has a label for rate limits and each failure an operator acts on differently", () => {
    expect(checkoutOutcomeOf({ kind: "rate-limited", detail: "", retryAfterSeconds: 1 })).toBe(
      "rate_limited",
    );
    expect(checkoutOutcomeOf({ kind: "database-unavailable", retryAfterSeconds: 2 })).toBe(
      "database_unavailable",
    );
    expect(checkoutOutcomeOf({ kind: "dependency-rejected", detail: "" })).toBe(
      "dependency_unavailable",
    );
    expect(checkoutOutcomeOf({ kind: "internal-error" })).toBe("internal_error");
    expect(new Set(CHECKOUT_OUTCOMES).size).toBe(11);
  });
});
