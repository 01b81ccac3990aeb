import { describe, expect, it } from "vitest";
import { portRangeOf, portSlices } from "@/lib/process/free-port";

describe("port slices", () => {
  it("cut the range into slices that do not overlap and leave no port out", () => {
    const slices = portSlices(3).map((slice) => portRangeOf(slice));
    expect(slices[0]!.first).toBe(20_000);
    for (let index = 1; index < slices.length; index++)
      expect(slices[index]!.first).toBe(slices[index - 1]!.last + 1);
    expect(slices.at(-1)!.last).toBeLessThanOrEqual(32_767);
    expect(slices.at(-1)!.last).toBeGreaterThan(32_767 - 3);
  });

  it("hand out the whole range without a slice, and refuse a slice outside it", () => {
    expect(portRangeOf(undefined)).toEqual({ first: 20_000, last: 32_767 });
    expect(() => portRangeOf("1000-2000")).toThrow(/not within/);
    expect(() => portRangeOf("25000-24000")).toThrow(/not within/);
  });
});
