import { describe, expect, it } from "vitest";
import { canonicalForm, FormError, listOf, parseForm } from "@/lib/payments/simulator/form";

/** Plain objects, for comparing with the prototype-less ones the parser builds. */
function plain(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value));
}

describe("parseForm", () => {
  it("reads flat parameters as strings", () => {
    expect(
      plain(parseForm("amount=1900&currency=usd&payment_method=pm_card_visa&confirm=true")),
    ).toEqual({
      amount: "1900",
      currency: "usd",
      payment_method: "pm_card_visa",
      confirm: "true",
    });
  });

  it("nests bracketed names, bare or percent-encoded", () => {
    const bare = parseForm("metadata[order]=42&automatic_payment_methods[enabled]=true&a[b][c]=d");
    const encoded = parseForm(
      "metadata%5Border%5D=42&automatic_payment_methods%5Benabled%5D=true&a%5Bb%5D%5Bc%5D=d",
    );
    const expected = {
      metadata: { order: "42" },
      automatic_payment_methods: { enabled: "true" },
      a: { b: { c: "d" } },
    };
    expect(plain(bare)).toEqual(expected);
    expect(plain(encoded)).toEqual(expected);
  });

  it("decodes + as a space and percent-escapes, in names and values", () => {
    expect(plain(parseForm("description=Two+mugs%2C+one+bag&metadata[note+1]=caf%C3%A9"))).toEqual({
      description: "Two mugs, one bag",
      metadata: { "note 1": "café" },
    });
  });

  it("keeps = inside values and treats a missing = as an empty value", () => {
    expect(plain(parseForm("return_url=https://x.test/?a=b&flag"))).toEqual({
      return_url: "https://x.test/?a=b",
      flag: "",
    });
  });

  it("appends [] to a list and reads indexed lists in index order", () => {
    const form = parseForm(
      "expand[]=a&expand[]=b&payment_method_types[1]=link&payment_method_types[0]=card",
    );
    expect(listOf(form.expand)).toEqual(["a", "b"]);
    expect(listOf(form.payment_method_types)).toEqual(["card", "link"]);
    expect(listOf(parseForm("metadata[k]=v").metadata)).toBeUndefined();
  });

  it("accepts an empty body", () => {
    expect(plain(parseForm(""))).toEqual({});
  });

  it("treats __proto__ as an ordinary parameter name", () => {
    const form = parseForm("__proto__[polluted]=yes&metadata[constructor]=x");
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(plain(form.metadata)).toEqual({ constructor: "x" });
  });

  it.each([
    ["a[b=1", /Invalid parameter name/],
    ["a]=1", /Invalid parameter name/],
    ["[a]=1", /Invalid parameter name/],
    ["a[b]c=1", /Invalid parameter name/],
    ["a[][b]=1", /only allowed at the end/],
    ["amount=1&amount=2", /more than once/],
    ["a=1&a[b]=2", /mixes/],
    ["a[b]=2&a=1", /mixes/],
    ["a[]=1&a[b]=2", /mixes/],
    ["amount=%E0%A4%A", /percent-encoding/],
    ["a[1][2][3][4][5][6][7][8]=x", /too deeply/],
  ])("refuses %s", (body, message) => {
    expect(() => parseForm(body)).toThrow(FormError);
    expect(() => parseForm(body)).toThrow(message);
  });

  it("names the offending parameter", () => {
    try {
      parseForm("amount=1&metadata[x]=1&metadata[x]=2");
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(FormError);
      expect((error as FormError).param).toBe("metadata[x]");
    }
  });
});

describe("canonicalForm", () => {
  it("is the same for the same parameters in any order, at any depth", () => {
    const a = parseForm("amount=1900&currency=usd&metadata[a]=1&metadata[b]=2");
    const b = parseForm("metadata[b]=2&currency=usd&metadata[a]=1&amount=1900");
    expect(canonicalForm(a)).toBe(canonicalForm(b));
  });

  it("changes with any value, and with list order", () => {
    const base = canonicalForm(parseForm("amount=1900&expand[]=a&expand[]=b"));
    expect(canonicalForm(parseForm("amount=1901&expand[]=a&expand[]=b"))).not.toBe(base);
    expect(canonicalForm(parseForm("amount=1900&expand[]=b&expand[]=a"))).not.toBe(base);
  });

  it("cannot be fooled by moving text between a name and a value", () => {
    expect(canonicalForm(parseForm("a=b%22%3A%22c"))).not.toBe(
      canonicalForm(parseForm("a%22%3A%22b=c")),
    );
  });
});
