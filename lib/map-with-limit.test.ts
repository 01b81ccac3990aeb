import { describe, expect, it } from "vitest";
import { mapWithLimit } from "@/lib/map-with-limit";

describe("mapWithLimit", () => {
  it("keeps the items' order and never runs more than the limit at once", async () => {
    let running = 0;
    let peak = 0;
    const results = await mapWithLimit([50, 10, 30, 0, 20, 5], 3, async (ms) => {
      peak = Math.max(peak, ++running);
      await new Promise((resolve) => setTimeout(resolve, ms));
      running--;
      return ms * 2;
    });
    expect(results).toEqual([100, 20, 60, 0, 40, 10]);
    expect(peak).toBe(3);
  });

  it("runs at least one lane, and none for no items", async () => {
    expect(await mapWithLimit([1, 2], 0, async (n) => n + 1)).toEqual([2, 3]);
    expect(await mapWithLimit([], 4, async () => 1)).toEqual([]);
  });
});
