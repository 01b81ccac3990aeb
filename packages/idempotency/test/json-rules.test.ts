import { describe, expect, it } from "vitest";
import { canonicalJson } from "../src/canonical-json.js";
import { checkJsonRules, MAX_JSON_DEPTH } from "../src/json-rules.js";

function nested(depth: number): unknown {
  let value: unknown = 1;
  for (let level = 0; level < depth; level++) value = [value];
  return value;
}

describe("checkJsonRules", () => {
  it("accepts an ordinary checkout body, unicode and all", () => {
    const body = {
      cartId: "cart_ü☕",
      items: [{ sku: "mug-ceramic-350", quantity: 2 }],
      note: "emoji 🙂 ok",
      n: -1.5e300,
    };
    expect(checkJsonRules(body)).toBeNull();
    expect(() => canonicalJson(body)).not.toThrow();
  });

  it("refuses U+0000 in a value, even in a field nobody reads, and names where", () => {
    expect(checkJsonRules(JSON.parse('{"cartId":"a","extra":{"deep":["x\\u0000y"]}}'))).toEqual({
      rule: "nul-character",
      path: ".extra.deep[0]",
      detail: expect.stringContaining("extra.deep[0]"),
    });
  });

  it("refuses U+0000 in an object key", () => {
    expect(checkJsonRules(JSON.parse('{"a\\u0000b":1}'))).toMatchObject({ rule: "nul-character" });
  });

  it("refuses a lone surrogate in a value or a key, which canonical JSON cannot encode", () => {
    const inValue = JSON.parse('{"cartId":"\\ud800"}');
    const inKey = JSON.parse('{"\\udc00":1}');
    expect(() => canonicalJson(inValue)).toThrow();
    expect(checkJsonRules(inValue)).toMatchObject({ rule: "lone-surrogate", path: ".cartId" });
    expect(checkJsonRules(inKey)).toMatchObject({ rule: "lone-surrogate" });
  });

  it("refuses a number that overflows to Infinity", () => {
    expect(checkJsonRules(JSON.parse('{"x":[1e400]}'))).toMatchObject({
      rule: "non-finite-number",
      path: ".x[0]",
    });
    expect(checkJsonRules(JSON.parse("-1e400"))).toMatchObject({
      rule: "non-finite-number",
      path: "",
    });
  });

  it(`accepts ${MAX_JSON_DEPTH} levels of nesting and refuses one more`, () => {
    expect(checkJsonRules(nested(MAX_JSON_DEPTH))).toBeNull();
    expect(checkJsonRules(nested(MAX_JSON_DEPTH + 1))).toMatchObject({ rule: "too-deep" });
  });

  it("checks a body nested thousands of levels deep without running out of stack", () => {
    const deep = JSON.parse(`${"[".repeat(8000)}${"]".repeat(8000)}`);
    expect(checkJsonRules(deep)).toMatchObject({ rule: "too-deep" });
  });
});
