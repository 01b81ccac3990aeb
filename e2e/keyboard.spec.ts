import { expect, test, type Page } from "@playwright/test";
import { accountIdOf, closeDatabase, ordersOf, paymentsOf } from "@/lib/testing/e2e/database";
import { tabTo } from "./tab";

/**
 * The checkout without a mouse: only Tab, Shift+Tab, Enter, Space and the
 * arrow keys, the way a keyboard or screen reader user moves through the
 * page. What the live regions said is recorded as it happens (progress lasts
 * only as long as a request), and the outcome is checked in the database.
 */
test.afterAll(closeDatabase);

/**
 * Records, from the first paint on, every text the cart's live regions
 * (role="status" and role="alert") held, in order: what a screen reader was
 * given to announce.
 */
async function recordAnnouncements(page: Page) {
  await page.addInitScript(() => {
    const said: { role: string; text: string }[] = [];
    const last = new Map<string, string>();
    Object.assign(window, { __oncepayAnnounced: said });
    new MutationObserver(() => {
      for (const region of document.querySelectorAll(
        '#cart [role="status"], #cart [role="alert"]',
      )) {
        const role = region.getAttribute("role")!;
        const text = region.textContent?.trim() ?? "";
        if (text && last.get(role) !== text) {
          last.set(role, text);
          said.push({ role, text });
        }
      }
    }).observe(document, { subtree: true, childList: true, characterData: true });
  });
}

async function announcements(page: Page): Promise<{ role: string; text: string }[]> {
  return page.evaluate(
    () =>
      (window as unknown as { __oncepayAnnounced: { role: string; text: string }[] })
        .__oncepayAnnounced,
  );
}

/** What has the focus, as the browser itself says. */
async function focused(page: Page) {
  return page.evaluate(() => ({
    id: document.activeElement?.id ?? "",
    testId: document.activeElement?.getAttribute("data-testid") ?? "",
    text: document.activeElement?.textContent?.trim() ?? "",
  }));
}

for (const { width, height } of [
  { width: 1280, height: 900 },
  { width: 390, height: 844 },
]) {
  test(`keyboard only at ${width} px: from an empty cart to a paid order, announced, with focus on the result`, async ({
    page,
    context,
  }, testInfo) => {
    await page.setViewportSize({ width, height });
    await recordAnnouncements(page);
    await page.goto("/");
    await expect(page.getByTestId("cart-count")).toHaveText("0 items");

    await tabTo(page, page.getByRole("button", { name: "Add Stoneware Mug to cart" }));
    await page.keyboard.press("Enter");
    await tabTo(page, page.getByRole("button", { name: "Add Gooseneck Kettle to cart" }));
    await page.keyboard.press("Space");
    await tabTo(page, page.getByRole("button", { name: "Increase quantity of Stoneware Mug" }));
    await page.keyboard.press("Enter");
    await expect(page.getByTestId("cart-total")).toHaveText("$95.00");

    const method = page.getByLabel(/payment method/i);
    await tabTo(page, method);
    await page.keyboard.press("ArrowDown");
    await expect(method).toHaveValue("pm_card_mastercard");
    await tabTo(page, page.getByTestId("pay-button"));
    await page.keyboard.press("Enter");

    const confirmation = page.getByTestId("order-confirmation");
    await expect(confirmation).toBeVisible();
    const orderId = (await page.getByTestId("order-id").textContent())?.trim();
    // Focus moved to the result, so the next Tab continues from there.
    expect(await focused(page)).toMatchObject({ id: "order-confirmed-heading" });
    await expect(confirmation).toContainText("Test card: Mastercard (succeeds)");

    const status = page.getByTestId("checkout-status");
    await expect(status).toHaveRole("status");
    await expect(status).toHaveText("Paid");
    expect(await announcements(page)).toEqual([
      { role: "status", text: "Paying…" },
      { role: "status", text: "Paid" },
    ]);

    const accountId = await accountIdOf(context);
    expect(await ordersOf(accountId)).toEqual([{ id: orderId, total_amount: 9500 }]);
    expect(await paymentsOf(accountId)).toEqual([{ status: "succeeded", amount: 9500 }]);

    // Focused and on screen: the page scrolls smoothly, so this waits for it to arrive.
    await expect(page.getByRole("heading", { name: "Order confirmed" })).toBeInViewport();
    await page.screenshot({ path: testInfo.outputPath(`keyboard-paid-${width}.png`) });

    // From the result, the next stop is the order in the ledger.
    await page.keyboard.press("Tab");
    expect(await focused(page)).toMatchObject({ testId: "see-orders" });
    await page.keyboard.press("Enter");
    await expect(page).toHaveURL(/\/orders$/);
    await expect(page.getByTestId("ledger-row")).toHaveAttribute("data-order-id", orderId!);
  });
}

test("keyboard only: a declined card is announced as an alert that takes the focus, and a second card pays", async ({
  page,
  context,
}, testInfo) => {
  await recordAnnouncements(page);
  await page.goto("/");
  await expect(page.getByTestId("cart-count")).toHaveText("0 items");

  await tabTo(page, page.getByRole("button", { name: "Add Paper Filters to cart" }));
  await page.keyboard.press("Enter");
  const method = page.getByLabel(/payment method/i);
  await tabTo(page, method);
  await page.keyboard.press("ArrowDown");
  await page.keyboard.press("ArrowDown");
  await expect(method).toHaveValue("pm_card_chargeDeclined");
  await tabTo(page, page.getByTestId("pay-button"));
  await page.keyboard.press("Enter");

  const alert = page.getByRole("alert").filter({ hasText: "Your cart is saved." });
  await expect(alert).toContainText("Choose another payment method");
  expect(await focused(page)).toMatchObject({ testId: "checkout-alert" });
  const declined = (await page.getByTestId("checkout-status").textContent())!.trim();
  expect(declined).toMatch(/^Payment declined: /);
  await expect(alert).toBeInViewport();
  await page.screenshot({ path: testInfo.outputPath("keyboard-declined.png") });

  const accountId = await accountIdOf(context);
  expect(await ordersOf(accountId)).toEqual([]);
  expect(await paymentsOf(accountId)).toEqual([{ status: "declined", amount: 650 }]);

  // Back up from the alert to the payment method, pick the Visa, pay again.
  await tabTo(page, method, "Shift+Tab");
  await page.keyboard.press("ArrowUp");
  await page.keyboard.press("ArrowUp");
  await expect(method).toHaveValue("pm_card_visa");
  await tabTo(page, page.getByTestId("pay-button"));
  await page.keyboard.press("Enter");

  await expect(page.getByTestId("order-confirmation")).toBeVisible();
  expect(await focused(page)).toMatchObject({ id: "order-confirmed-heading" });
  expect(await announcements(page)).toEqual([
    { role: "status", text: "Paying…" },
    { role: "status", text: declined },
    { role: "alert", text: expect.stringContaining("Your cart is saved.") },
    { role: "status", text: "Paying…" },
    { role: "status", text: "Paid" },
  ]);
  const orders = await ordersOf(accountId);
  expect(orders).toEqual([{ id: expect.any(String), total_amount: 650 }]);
  expect(await paymentsOf(accountId)).toEqual([
    { status: "declined", amount: 650 },
    { status: "succeeded", amount: 650 },
  ]);
});
