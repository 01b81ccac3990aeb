import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  IDEMPOTENCY_KEY_FIELD_PATTERN,
  MAX_KEY_LENGTH,
  parseIdempotencyKey,
} from "../src/key-header.js";

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

describe("IDEMPOTENCY_KEY_FIELD_PATTERN (the header as an API document describes it)", () => {
  const described = (value: string) => IDEMPOTENCY_KEY_FIELD_PATTERN.test(value);
  const parsed = (value: string) => parseIdempotencyKey(value).ok;

  it.each([
    "8e03978e-40d5-43e8-bc93-6894a57f9324",
    '"8e03978e-40d5-43e8-bc93-6894a57f9324"',
    '"a\\"b"',
    '"k";v=1',
    '"k"; a; b=?1; c=:AQ==:; d="x y"; e=1.5; f=tok/en',
    "a,b",
    "x".repeat(MAX_KEY_LENGTH),
    `"${"x".repeat(MAX_KEY_LENGTH)}"`,
    "x".repeat(MAX_KEY_LENGTH + 1),
    `"${"x".repeat(MAX_KEY_LENGTH + 1)}"`,
    '""',
    '"a b"',
    "a, b",
    "a,",
    ",a",
    '"a", "b"',
    '"a',
    "ключ",
    "?1",
    "42",
    '"k";V=1',
  ])("agrees with the parser on %j", (value) => {
    expect(described(value)).toBe(parsed(value));
  });

  it("agrees with the parser on any field a client could send", () => {
    const printable = fc.string({
      unit: fc.constantFrom(...' !"#$%&()*+,-./09:;<=>?@AZ[\\]^_`az{|}~'.split("")),
      maxLength: 12,
    });
    const quoted = printable.map((text) => `"${text.replace(/[\\"]/g, (c) => `\\${c}`)}"`);
    const withParameters = fc
      .tuple(
        quoted,
        fc.array(fc.constantFrom(";a", "; b=1", ";c=?0", ';d="x"', ";E=1", ";f=1.2345"), {
          maxLength: 3,
        }),
      )
      .map(([item, parameters]) => item + parameters.join(""));
    fc.assert(
      fc.property(fc.oneof(printable, quoted, withParameters, fc.string()), (value) => {
        expect(described(value.trim())).toBe(parsed(value.trim()));
      }),
      { numRuns: 2000 },
    );
  });
});
