import { describe, expect, it } from "vitest";
import { parseSearchQuery } from "@/lib/payments/simulator/search";

describe("parseSearchQuery", () => {
  it("reads metadata, status and currency clauses joined by AND, in either quotes", () => {
    expect(parseSearchQuery(`metadata['oncepay_provider_key']:'oncepay:a:b' AND status:"succeeded" AND currency:'usd'`)).toEqual({
      ok: true,
      clauses: [
        { field: "metadata", key: "oncepay_provider_key", value: "oncepay:a:b" },
        { field: "status", value: "succeeded" },
        { field: "currency", value: "usd" },
      ],
    });
    expect(parseSearchQuery(`metadata["ref"]:"x"`)).toEqual({ ok: true, clauses: [{ field: "metadata", key: "ref", value: "x" }] });
  });

  it.each(["", "amount>100", "status:'a' OR status:'b'", "metadata['k']:unquoted", "customer:'cus_1'"])("refuses %j, saying what it supports", (query) => {
    expect(parseSearchQuery(query)).toMatchObject({ ok: false, message: expect.any(String) });
  });
});
