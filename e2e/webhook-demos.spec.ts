import { expect, test } from "@playwright/test";
import {
  accountIdOf,
  closeDatabase,
  deliveriesOf,
  fulfilmentOf,
  labWebhookStormOf,
} from "@/lib/testing/e2e/database";

/**
 * The provider's side, as a person sees it: the "Duplicate webhooks" demo
 * (3-D Secure, then the provider delivers the paid order's event 13 more
 * times) shows every delivery under the confirmation, and the lab's webhook
 * storm races OncePay's handler against one without an event record. The
 * checks are the database's: the delivery log, shipments, statuses.
 */
test.afterAll(closeDatabase);

for (const { width, height } of [
  { width: 1280, height: 1100 },
  { width: 390, height: 844 },
]) {
  test(`demo at ${width} px: Duplicate webhooks: 14 deliveries under the confirmation, one that paid; shipped once`, async ({
    page,
    context,
  }, testInfo) => {
    await page.setViewportSize({ width, height });
    await page.goto("/");
    await page.getByRole("radio", { name: "Duplicate webhooks", exact: true }).check();
    // The scenario picks the card whose bank asks for 3-D Secure.
    await expect(page.getByLabel(/payment method/i)).toHaveValue("pm_card_authenticationRequired");
    await page.getByRole("button", { name: "Add Stoneware Mug to cart" }).click();
    await page.getByTestId("pay-button").click();
    await page.getByRole("button", { name: "Complete authentication" }).click();

    await expect(page.getByTestId("order-confirmation")).toBeVisible();
    const deliveries = page.getByTestId("provider-delivery");
    // The page keeps every delivery it was told of: the list only grows.
    await expect(deliveries).toHaveCount(14, { timeout: 20_000 });
    await expect(
      page.getByTestId("provider-delivery").and(page.locator('[data-outcome="paid"]')),
    ).toHaveCount(1);
    await expect(page.getByTestId("provider-events-summary")).toContainText(
      "14 deliveries of 1 event",
    );
    await expect(page.getByTestId("provider-events-summary")).toContainText("shipped 1 time");

    const accountId = await accountIdOf(context);
    const logged = await deliveriesOf(accountId);
    expect(logged.filter((outcome) => outcome === "paid")).toHaveLength(1);
    expect(logged.filter((outcome) => outcome === "duplicate")).toHaveLength(13);
    expect(await fulfilmentOf(accountId)).toEqual([
      { status: "paid", settled_by: "webhook", shipments: 1 },
    ]);
    await page.getByTestId("provider-events").scrollIntoViewIfNeeded();
    await page.screenshot({
      path: testInfo.outputPath(`duplicate-webhooks-${width}.png`),
      fullPage: true,
    });
  });
}

test("lab: a webhook storm at each handler; the one without an event record ships over and over, OncePay's once", async ({
  page,
}, testInfo) => {
  await page.setViewportSize({ width: 1280, height: 1000 });
  await page.goto("/lab");
  const storms = page.getByTestId("webhook-storms");
  await storms.scrollIntoViewIfNeeded();
  const sizes = storms.getByRole("group", { name: "Copies of the success at once" });
  await sizes.getByText("10", { exact: true }).click();
  await expect(sizes.getByRole("radio", { name: "10 copies", exact: true })).toBeChecked();

  for (const [design, outcome] of [
    ["no_event_record", "broke"],
    ["event_record", "held"],
  ] as const) {
    const card = page.getByTestId(`webhook-design-${design}`);
    await card.getByRole("button", { name: "Run the storm" }).click();
    await expect(card).toHaveAttribute("data-outcome", outcome, { timeout: 20_000 });
    const stormId = await card.getAttribute("data-storm-id");
    const recorded = await labWebhookStormOf(stormId!);
    await expect(card.getByTestId("webhook-shipments")).toHaveText(String(recorded.shipments));
    await expect(card.getByTestId("webhook-order-status")).toHaveText(recorded.status);
    if (design === "event_record") expect(recorded).toEqual({ status: "paid", shipments: 1 });
    else expect(recorded.shipments).toBe(13);
  }
  await storms.screenshot({ path: testInfo.outputPath("lab-webhook-storms-1280.png") });
  await page.setViewportSize({ width: 390, height: 844 });
  await storms.screenshot({ path: testInfo.outputPath("lab-webhook-storms-390.png") });
});
