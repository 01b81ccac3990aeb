import { expect, test } from "@playwright/test";
import { accountIdOf, closeDatabase, fulfilmentOf } from "@/lib/testing/e2e/database";
import { tabTo } from "./tab";

/**
 * 3-D Secure in the browser: the card that asks for authentication takes
 * the shopper to the bank's page (the payment simulator's), and back; the
 * page then shows what the order came to, once the provider's event has
 * settled it. By mouse and by keyboard, at a desktop's width and a phone's.
 * The outcome is checked in the database: the order's status, who settled
 * it (the webhook), and its shipments.
 */
test.afterAll(closeDatabase);

const CARD = "pm_card_authenticationRequired";

for (const { width, height } of [
  { width: 1280, height: 900 },
  { width: 390, height: 844 },
]) {
  test(`by mouse at ${width} px: the bank's page, Complete, and back to the paid order, shipped once`, async ({
    page,
    context,
  }, testInfo) => {
    await page.setViewportSize({ width, height });
    await page.goto("/");
    await page.getByRole("button", { name: "Add Stoneware Mug to cart" }).click();
    await page.getByLabel(/payment method/i).selectOption(CARD);
    await page.getByTestId("pay-button").click();

    await expect(page.getByRole("heading", { name: "Authenticate this payment" })).toBeVisible();
    await expect(page.getByText("Visa •••• 3184")).toBeVisible();
    await page.screenshot({ path: testInfo.outputPath(`bank-page-${width}.png`) });
    await page.getByRole("button", { name: "Complete authentication" }).click();

    await expect(page.getByTestId("order-confirmation")).toBeVisible();
    // The bank's parameters, its client secret among them, left the address bar.
    expect(new URL(page.url()).search).toBe("");
    await expect(page.getByTestId("order-amount")).toHaveText("$18.00");
    const accountId = await accountIdOf(context);
    expect(await fulfilmentOf(accountId)).toEqual([
      { status: "paid", settled_by: "webhook", shipments: 1 },
    ]);
    await page.screenshot({
      path: testInfo.outputPath(`authenticated-${width}.png`),
      fullPage: true,
    });

    // The ledger checks the shipment against the payment, and shows the event that settled it.
    await page.getByTestId("see-orders").click();
    const fulfilment = page.getByTestId("ledger-fulfilment");
    await expect(fulfilment).toContainText("Shipped once");
    await expect(fulfilment).toContainText("Settled by the provider's event.");
    await expect(page.getByTestId("ledger-events")).toContainText("payment_intent.succeeded: paid");
    await page.screenshot({ path: testInfo.outputPath(`ledger-${width}.png`), fullPage: true });

    // And the key's page: the payment, who settled it, and the event.
    await page.getByTestId("ledger-key").click();
    await expect(page.getByTestId("key-events")).toContainText("payment_intent.succeeded: paid");
    await expect(page.getByTestId("key-payment")).toContainText("settled by the provider's event");
    await page.screenshot({ path: testInfo.outputPath(`key-${width}.png`), fullPage: true });
  });

  test(`by keyboard at ${width} px: Fail at the bank, and the shop says so; nothing ships`, async ({
    page,
    context,
  }, testInfo) => {
    await page.setViewportSize({ width, height });
    await page.goto("/");
    await expect(page.getByTestId("cart-count")).toHaveText("0 items");
    await tabTo(page, page.getByRole("button", { name: "Add House Blend Beans to cart" }));
    await page.keyboard.press("Enter");
    await page.getByLabel(/payment method/i).focus();
    await page.keyboard.press("End");
    await expect(page.getByLabel(/payment method/i)).toHaveValue(CARD);
    await tabTo(page, page.getByTestId("pay-button"));
    await page.keyboard.press("Enter");

    // Complete has the focus on the bank's page; one Tab on is Fail.
    const complete = page.getByRole("button", { name: "Complete authentication" });
    await expect(complete).toBeFocused();
    await page.keyboard.press("Tab");
    await expect(page.getByRole("button", { name: "Fail authentication" })).toBeFocused();
    await page.keyboard.press("Enter");

    const status = page.getByTestId("checkout-status");
    await expect(status).toContainText("your bank did not confirm it (3-D Secure)");
    // The alert has the focus, and the cart is back to pay again.
    await expect(page.getByTestId("checkout-alert")).toBeFocused();
    await expect(page.getByTestId("cart-count")).toHaveText("1 item");
    const accountId = await accountIdOf(context);
    expect(await fulfilmentOf(accountId)).toEqual([
      { status: "failed", settled_by: "webhook", shipments: 0 },
    ]);
    // Focused and on screen: the page scrolls smoothly, so this waits for it to arrive.
    await expect(page.getByTestId("checkout-alert")).toBeInViewport();
    await page.screenshot({ path: testInfo.outputPath(`not-authenticated-${width}.png`) });

    // Another card, from the keyboard: a new checkout, paid at once.
    await page.getByLabel(/payment method/i).focus();
    await page.keyboard.press("Home");
    await tabTo(page, page.getByTestId("pay-button"));
    await page.keyboard.press("Enter");
    await expect(page.getByTestId("order-confirmation")).toBeVisible();
    expect(await fulfilmentOf(accountId)).toEqual([
      { status: "failed", settled_by: "webhook", shipments: 0 },
      { status: "paid", settled_by: null, shipments: 1 },
    ]);
  });
}
