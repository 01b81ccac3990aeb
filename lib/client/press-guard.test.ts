import { describe, expect, it } from "vitest";
import {
  DOUBLE_CLICK_DISTANCE_PX,
  DOUBLE_CLICK_INTERVAL_MS,
  createPressGuard,
} from "./press-guard";

function clock() {
  let time = 1_000;
  return { now: () => time, advance: (ms: number) => (time += ms) };
}

const pay = { x: 1058, y: 459 };

describe("the press guard", () => {
  it("lets every press through while the page has not changed", () => {
    const { now, advance } = clock();
    const guard = createPressGuard(now);
    expect(guard.ignore(pay)).toBe(false);
    advance(50);
    expect(guard.ignore(pay)).toBe(false);
  });

  it("ignores the second click at the same spot 50, 150 and 300 ms after a change", () => {
    for (const gap of [0, 50, 150, 300, DOUBLE_CLICK_INTERVAL_MS - 1]) {
      const { now, advance } = clock();
      const guard = createPressGuard(now);
      expect(guard.ignore(pay)).toBe(false);
      guard.changed();
      advance(gap);
      expect(guard.ignore({ x: pay.x + 3, y: pay.y - 2 }), `${gap} ms after the change`).toBe(true);
    }
  });

  it("lets a press elsewhere through at once: it was aimed at what is there now", () => {
    const { now } = clock();
    const guard = createPressGuard(now);
    guard.ignore(pay);
    guard.changed();
    expect(guard.ignore({ x: pay.x, y: pay.y + DOUBLE_CLICK_DISTANCE_PX + 1 })).toBe(false);
  });

  it("lets the same spot through once the interval has passed", () => {
    const { now, advance } = clock();
    const guard = createPressGuard(now);
    guard.ignore(pay);
    guard.changed();
    advance(DOUBLE_CLICK_INTERVAL_MS);
    expect(guard.ignore(pay)).toBe(false);
  });

  it("counts from the latest change", () => {
    const { now, advance } = clock();
    const guard = createPressGuard(now);
    guard.ignore(pay);
    guard.changed();
    advance(400);
    guard.changed();
    advance(400);
    expect(guard.ignore(pay)).toBe(true);
  });
});
