import { describe, expect, it } from "vitest";
import { canonicalJson } from "../src/canonical-json.js";

describe("canonicalJson (RFC 8785)", () => {
  it("sorts keys at every depth, by UTF-16 code units, and keeps arrays in order", () => {
    expect(canonicalJson({ b: [3, { z: 1, a: 2 }], a: null, é: true, Z: "x" })).toBe(
      '{"Z":"x","a":null,"b":[3,{"a":2,"z":1}],"é":true}',
    );
    // U+1F600 (a surrogate pair, 0xD83D…) sorts before U+FFFD (0xFFFD) in UTF-16, after it in code points.
    expect(canonicalJson({ "\uFFFD": 1, "\u{1F600}": 2 })).toBe('{"\u{1F600}":2,"\uFFFD":1}');
  });

  it("writes numbers and strings as JavaScript does, as the scheme says", () => {
    expect(canonicalJson([1e21, 1e-7, -0, 0.1 + 0.2, '\u2028\n"'])).toBe(
      '[1e+21,1e-7,0,0.30000000000000004,"\u2028\\n\\""]',
    );
  });

  it("drops what JSON.stringify drops: undefined members, and null in their place in arrays", () => {
    expect(canonicalJson({ a: undefined, b: () => 1, c: [undefined, Symbol("s")] })).toBe(
      '{"c":[null,null]}',
    );
    expect(canonicalJson({ at: new Date(0) })).toBe('{"at":"1970-01-01T00:00:00.000Z"}');
  });

  it("refuses what JSON cannot say the same way twice", () => {
    expect(() => canonicalJson(Number.NaN)).toThrow(TypeError);
    expect(() => canonicalJson({ a: Infinity })).toThrow(TypeError);
    expect(() => canonicalJson(["\uD800"])).toThrow(TypeError);
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    expect(() => canonicalJson(circular)).toThrow(TypeError);
    expect(() => canonicalJson(undefined)).toThrow(TypeError);
  });

  it("writes a value met twice, when it is not inside itself", () => {
    const shared = { x: 1 };
    expect(canonicalJson({ a: shared, b: shared })).toBe('{"a":{"x":1},"b":{"x":1}}');
  });
});
