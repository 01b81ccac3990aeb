/**
 * The longest interval at which two presses still make one double-click on
 * common desktops (Windows' default and GNOME's are 400 to 500 ms). A press
 * that follows a change of the page by less than this, at the spot of the
 * press before it, was aimed at what was there before.
 */
export const DOUBLE_CLICK_INTERVAL_MS = 500;
/**
 * How far apart two presses may land and still be one double-click; the
 * desktops' own tolerance is 4 to 8 px, a finger's is wider.
 */
export const DOUBLE_CLICK_DISTANCE_PX = 16;

export interface Point {
  x: number;
  y: number;
}

export interface PressGuard {
  /** The page just replaced what sits under the pointer (a payment settled). */
  changed(): void;
  /**
   * A press at `point`: whether to ignore it, because it came within a
   * double-click of a change and at the spot of the press before it. Every
   * press is remembered as the one the next is compared with.
   */
  ignore(point: Point): boolean;
}

/**
 * A payment can settle faster than a person clicks twice: the order came
 * back in about 95 ms here, so the second click of a double-click on Pay
 * landed on "Start a new order", which had just taken Pay's place, and
 * wiped the confirmation. The shop asks this guard about every click.
 */
export function createPressGuard(now: () => number = () => performance.now()): PressGuard {
  let changedAt = Number.NEGATIVE_INFINITY;
  let previous: Point | null = null;
  return {
    changed() {
      changedAt = now();
    },
    ignore(point) {
      const samePlace =
        previous !== null &&
        Math.hypot(point.x - previous.x, point.y - previous.y) <= DOUBLE_CLICK_DISTANCE_PX;
      previous = point;
      return samePlace && now() - changedAt < DOUBLE_CLICK_INTERVAL_MS;
    },
  };
}
