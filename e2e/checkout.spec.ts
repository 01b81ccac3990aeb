import { expect, test } from "@playwright/test";
import {
  accountIdOf,
  closeDatabase,
  idempotencyKeysOf,
  ordersOf,
  paymentsOf,
} from "@/lib/testing/e2e/database";

test.afterAll(closeDatabase);

test("a shopper fills a cart, clicks Pay and sees the paid order, which is in the database once", async ({
  page,
  context,
}, testInfo) => {
  await page.goto("/");
  await page.getByRole("button", { name: "Add Stoneware Mug to cart" }).click();
  await page.getByRole("button", { name: "Add Gooseneck Kettle to cart" }).click();
  await expect(page.getByTestId("cart-total")).toHaveText("$77.00");

  await page.getByRole("button", { name: /^Pay/ }).click();

  const confirmation = page.getByTestId("order-confirmation");
  await expect(confirmation).toBeVisible();
  await expect(page.getByTestId("order-amount")).toHaveText("$77.00");
  const orderId = (await page.getByTestId("order-id").textContent())?.trim();

  const accountId = await accountIdOf(context);
  const orders = await ordersOf(accountId);
  expect(orders).toEqual([{ id: orderId, total_amount: 7700 }]);
  expect(await paymentsOf(accountId)).toEqual([{ status: "succeeded", amount: 7700 }]);

  await page.screenshot({ path: testInfo.outputPath("paid-order.png"), fullPage: true });
});

test("a real double-click on Pay makes one order", async ({ page, context }, testInfo) => {
  const orderRequests: string[] = [];
  page.on("request", (request) => {
    if (request.method() === "POST" && request.url().endsWith("/api/orders"))
      orderRequests.push(request.headers()["idempotency-key"] ?? "");
  });

  await page.goto("/");
  await page.getByRole("button", { name: "Add House Blend Beans to cart" }).click();
  await page.getByRole("button", { name: /^Pay/ }).dblclick();

  await expect(page.getByTestId("order-confirmation")).toBeVisible();
  const accountId = await accountIdOf(context);
  expect(await ordersOf(accountId)).toHaveLength(1);
  expect(await paymentsOf(accountId)).toHaveLength(1);
  // However many requests the clicks produced, they all carried one key.
  expect(orderRequests.length).toBeGreaterThanOrEqual(1);
  expect(new Set(orderRequests).size).toBe(1);

  await page.screenshot({ path: testInfo.outputPath("double-click.png"), fullPage: true });
});

test("a declined card shows why, keeps the cart, and a second card pays once, under a new key", async ({
  page,
  context,
}, testInfo) => {
  const keys: (string | null)[] = [];
  page.on("request", (request) => {
    if (request.method() === "POST" && request.url().endsWith("/api/orders"))
      keys.push(request.headers()["idempotency-key"] ?? null);
  });
  await page.goto("/");
  await page.getByRole("button", { name: "Add Paper Filters to cart" }).click();
  await page.getByLabel(/payment method/i).selectOption("pm_card_chargeDeclined");
  await page.getByRole("button", { name: /^Pay/ }).click();

  await expect(page.getByTestId("checkout-status")).toContainText("Payment declined");
  await expect(page.getByTestId("checkout-alert")).toContainText(/another payment method/i);
  await page.screenshot({ path: testInfo.outputPath("declined.png"), fullPage: true });
  const accountId = await accountIdOf(context);
  expect(await ordersOf(accountId)).toEqual([]);
  expect(await paymentsOf(accountId)).toEqual([{ status: "declined", amount: 650 }]);

  await page.getByLabel(/payment method/i).selectOption("pm_card_visa");
  await page.getByRole("button", { name: /^Pay/ }).click();
  await expect(page.getByTestId("order-confirmation")).toBeVisible();
  const orders = await ordersOf(accountId);
  expect(orders).toHaveLength(1);

  // The decline ended its intent (the server stored the 402): the next Pay was a new intent with a new key.
  expect(keys).toHaveLength(2);
  expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
  expect(keys[1]).toMatch(/^[0-9a-f-]{36}$/);
  expect(keys[1]).not.toBe(keys[0]);
  expect(await idempotencyKeysOf(accountId)).toEqual([
    { key: keys[0], response_status: 402, order_id: null },
    { key: keys[1], response_status: 201, order_id: orders[0]!.id },
  ]);
});
