import type { Locator, Page } from "@playwright/test";

/** The most presses any control in the shop is away from another, with room to spare. */
const MAX_TABS = 80;

/**
 * Presses Tab (or Shift+Tab) until `target` has the focus, as a person tabs
 * through the page; fails if the tab order never reaches it. For the specs
 * that drive a page by keyboard alone.
 */
export async function tabTo(page: Page, target: Locator, key: "Tab" | "Shift+Tab" = "Tab") {
  for (let presses = 0; presses < MAX_TABS; presses++) {
    if (await target.evaluate((element) => element === document.activeElement)) return;
    await page.keyboard.press(key);
  }
  throw new Error(`${MAX_TABS} presses of ${key} never reached ${target}`);
}
