import { expect, test, type Page } from "@playwright/test";
import { accountIdOf, closeDatabase, ordersOf } from "@/lib/testing/e2e/database";
import { expectNoViolations } from "./axe";
import { chooseStormSize } from "./lab-page";

/**
 * Every page, with content on it, checked by axe against WCAG 2.2 AA at a
 * laptop's and a phone's width: the shop (empty, declined, paid, charged
 * twice), the lab after a storm, the ledger with orders (one purchase
 * charged twice), the key inspector of a real key, the API reference (its
 * contents open), and the 404 page.
 */
test.afterAll(closeDatabase);

/** Full-page, from the top: the cart column is sticky, and drawn where it sticks at the moment. */
async function screenshot(page: Page, path: string) {
  await page.evaluate(() => window.scrollTo({ top: 0, behavior: "instant" }));
  await page.screenshot({ path, fullPage: true });
}

for (const { width, height, name } of [
  { width: 1280, height: 900, name: "laptop" },
  { width: 390, height: 844, name: "phone" },
]) {
  test(`axe finds no WCAG 2.2 AA violation on any page at ${width} px`, async ({
    page,
    context,
  }, testInfo) => {
    test.setTimeout(120_000);
    await page.setViewportSize({ width, height });

    await page.goto("/");
    await expect(page.getByTestId("demo-status")).toContainText("No scenario armed");
    await expectNoViolations(page, "the shop, cart empty");

    await page.getByRole("button", { name: "Add Paper Filters to cart" }).click();
    await page.getByLabel(/payment method/i).selectOption("pm_card_chargeDeclined");
    await page.getByTestId("pay-button").click();
    await expect(page.getByTestId("checkout-alert")).toBeVisible();
    await expectNoViolations(page, "the shop, card declined");
    await screenshot(page, testInfo.outputPath(`declined-${name}.png`));

    await page.getByLabel(/payment method/i).selectOption("pm_card_visa");
    await page.getByTestId("pay-button").click();
    await expect(page.getByTestId("order-confirmation")).toBeVisible();
    const key = (await page.getByTestId("timeline-key").textContent())!.trim();
    expect(await ordersOf(await accountIdOf(context))).toHaveLength(1);
    await expectNoViolations(page, "the shop, order paid");
    await screenshot(page, testInfo.outputPath(`paid-${name}.png`));

    await page.goto("/orders");
    await expect(page.getByTestId("ledger-row")).toHaveCount(1);
    await expectNoViolations(page, "the ledger with an order");

    await page.goto(`/keys/${encodeURIComponent(key)}`);
    await expect(page.getByTestId("key-state")).toHaveAttribute("data-state", "complete");
    await expectNoViolations(page, "the key inspector");

    // The No-key demo: a purchase charged twice, which the shop leads with.
    await page.goto("/");
    await page.getByRole("radio", { name: "No key (broken)", exact: true }).check();
    await expect(page.getByTestId("demo-status")).toContainText("Armed: No key (broken).");
    await page.getByRole("button", { name: "Add Paper Filters to cart" }).click();
    await page.getByRole("button", { name: "Pay $6.50 without a key" }).click();
    await expect(page.getByTestId("order-confirmation")).toHaveAttribute(
      "data-outcome",
      "damaged",
      { timeout: 30_000 },
    );
    await expectNoViolations(page, "the shop, a purchase charged twice");

    await page.goto("/orders");
    await expect(page.getByTestId("ledger-purchase")).toHaveCount(2);
    await expect(page.getByTestId("ledger-damage")).toHaveCount(1);
    await expectNoViolations(page, "the ledger with a purchase charged twice");

    await page.goto("/docs/api");
    await expect(page.getByTestId("api-operation").first()).toBeVisible();
    await expectNoViolations(page, "the API reference");
    // Its contents: a side list on a laptop, folded at the top below 1024 px.
    if (width < 1024) {
      const compactContents = page.getByTestId("contents-compact");
      await compactContents.locator("summary").click();
      await expect(compactContents.getByRole("navigation", { name: "On this page" })).toBeVisible();
      await expectNoViolations(page, "the API reference, contents open");
    }

    expect((await page.goto("/nope"))?.status()).toBe(404);
    await expect(page.getByTestId("not-found")).toBeVisible();
    await expectNoViolations(page, "the 404 page");

    await page.goto("/lab");
    await chooseStormSize(page, 2);
    // One design that holds and one that breaks: their rows look different.
    for (const strategy of ["atomic_claim", "no_key"]) {
      await page.getByTestId(`lab-run-${strategy}`).click();
      await expect(page.getByTestId(`lab-row-${strategy}`)).not.toHaveAttribute(
        "data-storm-id",
        "",
        { timeout: 30_000 },
      );
    }
    await expectNoViolations(page, "the lab after two storms");
    await screenshot(page, testInfo.outputPath(`lab-${name}.png`));
  });
}
