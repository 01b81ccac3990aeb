import { describe, expect, it } from "vitest";
import { assertNever } from "@/lib/assert-never";

describe("assertNever", () => {
  it("throws, naming what was unhandled and its value, when a value slips past the types", () => {
    const fromTheDatabase = "refunded" as never;
    expect(() => assertNever(fromTheDatabase, "recovery point")).toThrow(
      'Unhandled recovery point: "refunded"',
    );
  });
});
