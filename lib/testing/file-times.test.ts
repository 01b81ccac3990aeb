import { describe, expect, it } from "vitest";
import { formatFileTimes } from "./file-times";

describe("the slowest files of a run", () => {
  const times = [
    { file: "a.test.ts", lane: "shared", seconds: 3.2 },
    { file: "b.test.ts", lane: "alongside", seconds: 95 },
    { file: "c.test.ts", lane: "", seconds: 41 },
  ];

  it("lists the slowest first, with each file's lane", () => {
    expect(formatFileTimes(times, 12).split("\n")).toEqual([
      "[tests] the 3 slowest files:",
      "  1 min 35 s  b.test.ts (alongside)",
      "        41 s  c.test.ts",
      "         3 s  a.test.ts (shared)",
    ]);
  });

  it("shows at most as many as asked, and says how many it shows", () => {
    expect(formatFileTimes(times, 1).split("\n")).toEqual([
      "[tests] the 1 slowest files:",
      "  1 min 35 s  b.test.ts (alongside)",
    ]);
  });
});
