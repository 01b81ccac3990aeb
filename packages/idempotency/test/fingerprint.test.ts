import { describe, expect, it } from "vitest";
import { fingerprintRequest } from "../src/fingerprint.js";

const body = { cartId: "c1", items: [{ sku: "a", quantity: 1 }], paymentMethod: "pm_card_visa" };

describe("fingerprintRequest", () => {
  it("is a SHA-256 hex digest", () => {
    expect(fingerprintRequest("POST", "/api/orders", body)).toMatch(/^[0-9a-f]{64}$/);
  });

  it("treats reordered object keys, at any depth, as the same request", () => {
    const reordered = {
      paymentMethod: "pm_card_visa",
      items: [{ quantity: 1, sku: "a" }],
      cartId: "c1",
    };
    expect(fingerprintRequest("POST", "/api/orders", reordered)).toBe(
      fingerprintRequest("POST", "/api/orders", body),
    );
  });

  it("ignores the case of the method", () => {
    expect(fingerprintRequest("post", "/api/orders", body)).toBe(
      fingerprintRequest("POST", "/api/orders", body),
    );
  });

  it("changes with any value in the body", () => {
    const changed = { ...body, items: [{ sku: "a", quantity: 2 }] };
    expect(fingerprintRequest("POST", "/api/orders", changed)).not.toBe(
      fingerprintRequest("POST", "/api/orders", body),
    );
  });

  it("keeps array order significant", () => {
    const a = { items: [1, 2] };
    const b = { items: [2, 1] };
    expect(fingerprintRequest("POST", "/x", a)).not.toBe(fingerprintRequest("POST", "/x", b));
  });

  it("changes with the path and with the method", () => {
    const base = fingerprintRequest("POST", "/api/orders", body);
    expect(fingerprintRequest("POST", "/api/refunds", body)).not.toBe(base);
    expect(fingerprintRequest("PATCH", "/api/orders", body)).not.toBe(base);
  });

  it("cannot be fooled by moving text between path and body", () => {
    expect(fingerprintRequest("POST", "/a", "b")).not.toBe(fingerprintRequest("POST", "/a\nb", ""));
  });
});
