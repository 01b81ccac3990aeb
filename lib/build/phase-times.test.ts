import { describe, expect, it } from "vitest";
import { formatPhaseTimes, minutesAndSeconds, parsePhaseTimes } from "@/lib/build/phase-times";

describe("phase times", () => {
  it("reads one phase per line and prints them as a table with the total", () => {
    const times = parsePhaseTimes("install\t52.6\ntypecheck\t19.2\n\nVitest\t431\n");
    expect(times).toEqual([
      { phase: "install", seconds: 52.6 },
      { phase: "typecheck", seconds: 19.2 },
      { phase: "Vitest", seconds: 431 },
    ]);
    expect(formatPhaseTimes(times).split("\n")).toEqual([
      "  install          53 s",
      "  typecheck        19 s",
      "  Vitest     7 min 11 s",
      "  total      8 min 23 s",
    ]);
  });

  it("refuses a line that is not a phase and its seconds", () => {
    expect(() => parsePhaseTimes("install 52")).toThrow(/Not a phase time/);
    expect(() => parsePhaseTimes("install\tsoon")).toThrow(/Not a phase time/);
  });

  it("writes minutes and seconds the way the README does", () => {
    expect(minutesAndSeconds(41.4)).toBe("41 s");
    expect(minutesAndSeconds(754.2)).toBe("12 min 34 s");
    expect(minutesAndSeconds(600)).toBe("10 min 0 s");
  });
});
