import { describe, expect, it } from "vitest";
import { MAX_KEY_LENGTH, parseIdempotencyKey } from "@/lib/idempotency/key";

describe("parseIdempotencyKey", () => {
  it("accepts the bare form Stripe uses", () => {
    expect(parseIdempotencyKey("8e03978e-40d5-43e8-bc93-6894a57f9324")).toEqual({
      ok: true,
      key: "8e03978e-40d5-43e8-bc93-6894a57f9324",
    });
  });

  it("accepts the RFC 8941 string form and names the same key", () => {
    expect(parseIdempotencyKey('"8e03978e-40d5-43e8-bc93-6894a57f9324"')).toEqual({
      ok: true,
      key: "8e03978e-40d5-43e8-bc93-6894a57f9324",
    });
  });

  it("ignores surrounding whitespace, as HTTP does", () => {
    expect(parseIdempotencyKey("  abc  ")).toEqual({ ok: true, key: "abc" });
  });

  it("accepts every printable ASCII character", () => {
    const printable = Array.from({ length: 0x7e - 0x21 + 1 }, (_, i) =>
      String.fromCharCode(0x21 + i),
    )
      .join("")
      .replace('"', "");
    expect(parseIdempotencyKey(`x${printable}`)).toEqual({ ok: true, key: `x${printable}` });
  });

  it(`accepts ${MAX_KEY_LENGTH} characters and rejects ${MAX_KEY_LENGTH + 1}`, () => {
    expect(parseIdempotencyKey("k".repeat(MAX_KEY_LENGTH))).toMatchObject({ ok: true });
    expect(parseIdempotencyKey("k".repeat(MAX_KEY_LENGTH + 1))).toMatchObject({
      ok: false,
      reason: "invalid",
    });
  });

  it("reports a missing header", () => {
    expect(parseIdempotencyKey(null)).toMatchObject({ ok: false, reason: "missing" });
    expect(parseIdempotencyKey("   ")).toMatchObject({ ok: false, reason: "missing" });
  });

  it("rejects an empty quoted string", () => {
    expect(parseIdempotencyKey('""')).toMatchObject({ ok: false, reason: "invalid" });
  });

  it("rejects characters outside printable ASCII", () => {
    expect(parseIdempotencyKey("caf\u00e9")).toMatchObject({ ok: false, reason: "invalid" });
    expect(parseIdempotencyKey("tab\there")).toMatchObject({ ok: false, reason: "invalid" });
    expect(parseIdempotencyKey('"has space"')).toMatchObject({ ok: false, reason: "invalid" });
  });

  it("rejects a structured value that is not a string", () => {
    expect(parseIdempotencyKey('"unterminated')).toMatchObject({ ok: false, reason: "invalid" });
  });

  it("recognises two fields joined by the Fetch API as repeated", () => {
    expect(parseIdempotencyKey("key-a, key-b")).toMatchObject({ ok: false, reason: "repeated" });
    expect(parseIdempotencyKey('"key-a", "key-b"')).toMatchObject({
      ok: false,
      reason: "repeated",
    });
  });

  it("recognises a repeated field with one side empty, whose join the Fetch API trims to a comma at one end", () => {
    expect(parseIdempotencyKey("k,")).toMatchObject({ ok: false, reason: "repeated" });
    expect(parseIdempotencyKey(", k")).toMatchObject({ ok: false, reason: "repeated" });
    expect(parseIdempotencyKey("a,b")).toEqual({ ok: true, key: "a,b" });
  });
});
