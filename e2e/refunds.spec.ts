import { randomUUID } from "node:crypto";
import { expect, test, type Locator, type Page, type TestInfo } from "@playwright/test";
import { LOCAL_SIMULATOR_SECRET_KEY } from "@/lib/payments/simulator/process";
import { StripePaymentProvider } from "@/lib/payments/stripe-provider";
import {
  accountIdOf,
  closeDatabase,
  idempotencyKeysOf,
  ordersOf,
  providerRefundsOfOrder,
  refundsOfOrder,
} from "@/lib/testing/e2e/database";
import { e2eSimulatorPort } from "@/lib/testing/e2e/paths";
import { expectNoViolations } from "./axe";

/**
 * Refunds as a shopper makes and checks them on the orders page: the
 * Refund control (one Idempotency-Key per press, a double-click refunds
 * once), the refunds beside each order checked against the payment
 * provider's own records, and a refund's key page. What the page says is
 * checked against our tables and the payment simulator's.
 */
test.afterAll(closeDatabase);

/** Pays for one product through the shop, as a shopper does; the order's id. */
async function payInShop(page: Page, product: string): Promise<string> {
  await page.goto("/");
  await page.getByRole("button", { name: `Add ${product} to cart` }).click();
  await page.getByRole("button", { name: /^Pay/ }).click();
  await expect(page.getByTestId("order-confirmation")).toBeVisible();
  return (await page.getByTestId("order-id").textContent())!.trim();
}

/** Pays for a cart over the API with this browser's session: the order's id and amount. */
async function payOverApi(page: Page): Promise<{ id: string; amount: number }> {
  await page.goto("/");
  const response = await page.request.post("/api/orders", {
    headers: { "Idempotency-Key": randomUUID() },
    data: {
      cartId: `cart_${randomUUID()}`,
      items: [
        { sku: "mug-ceramic-350", quantity: 1 },
        { sku: "filters-paper-100", quantity: 1 },
      ],
    },
  });
  expect(response.status()).toBe(201);
  const order = await response.json();
  return { id: order.id, amount: order.amount };
}

/** The order's row on the orders page. */
const orderRow = (page: Page, orderId: string): Locator =>
  page.locator(`[data-testid="ledger-row"][data-order-id="${orderId}"]`);

/** The page's own history of the order's refunds: each row's status and amount, oldest first. */
async function refundHistory(row: Locator): Promise<{ status: string; amount: number }[]> {
  return row.getByTestId("refund-row").evaluateAll((items) =>
    items.map((item) => ({
      status: item.getAttribute("data-status")!,
      amount: Number(item.getAttribute("data-amount")),
    })),
  );
}

/** The POSTs this page sends to refund an order, with the Idempotency-Key of each. */
function recordRefundRequests(page: Page): string[] {
  const keys: string[] = [];
  page.on("request", (request) => {
    if (request.method() === "POST" && /\/api\/orders\/[^/]+\/refunds$/.test(request.url()))
      keys.push(request.headers()["idempotency-key"] ?? "");
  });
  return keys;
}

/**
 * The page at the laptop's and the phone's width: checked by axe against
 * WCAG 2.2 AA, and a full-page screenshot into the test's output.
 */
async function lookAt(page: Page, testInfo: TestInfo, name: string, focus?: Locator) {
  for (const [device, width, height] of [
    ["laptop", 1280, 800],
    ["phone", 390, 844],
  ] as const) {
    await page.setViewportSize({ width, height });
    await focus?.scrollIntoViewIfNeeded();
    await expectNoViolations(page, `${name} at ${width} px`);
    await page.screenshot({ path: testInfo.outputPath(`${name}-${device}.png`), fullPage: true });
  }
  await page.setViewportSize({ width: 1280, height: 800 });
}

test("refund: a double-click on Refund refunds the order once, under one key", async ({
  page,
  context,
}, testInfo) => {
  const orderId = await payInShop(page, "Stoneware Mug");
  const sent = recordRefundRequests(page);
  await page.goto("/orders");
  const row = orderRow(page, orderId);
  const button = row.getByTestId("refund-button");
  await expect(button).toHaveText(/^Refund \$\d+\.\d\d$/);
  await lookAt(page, testInfo, "orders-refund-none", row);

  await button.dblclick();

  // The page's own history, rendered again from the records: one refund, of everything.
  await expect(row.getByTestId("refund-row")).toHaveCount(1);
  const accountId = await accountIdOf(context);
  const charged = (await ordersOf(accountId)).find((order) => order.id === orderId)!.total_amount;
  expect(await refundHistory(row)).toEqual([{ status: "succeeded", amount: charged }]);
  await expect(row.getByTestId("order-refunds")).toHaveAttribute("data-left", "0");
  await expect(row.getByTestId("refund-balance")).toContainText("Refunded in full");
  await expect(row.getByTestId("refund-button")).toHaveCount(0);
  await expect(row.getByTestId("order-refunds")).toHaveAttribute("data-verdict", "agree");
  await expect(row.getByTestId("refund-status")).toHaveAttribute("data-phase", "refunded");

  // Our records: one refund row, the payment refunded once, one refund key.
  const ours = await refundsOfOrder(orderId);
  expect(ours.refunds).toEqual([
    { status: "succeeded", amount: charged, provider_refund_id: expect.stringMatching(/^re_/) },
  ]);
  expect(ours.refundedAmount).toBe(charged);
  // The provider's: one refund of the PaymentIntent, the one we recorded.
  expect(await providerRefundsOfOrder(orderId)).toEqual([
    expect.objectContaining({ id: ours.refunds[0]!.provider_refund_id, amount: charged }),
  ]);
  // The page sent every request of it under one key: the second click sent nothing.
  expect(sent).toHaveLength(1);
  const keys = await idempotencyKeysOf(accountId);
  expect(keys.map((key) => key.key)).toContain(sent[0]);
  expect(keys).toHaveLength(2);
});

test("refund: part of an order, then the rest; the amount checked in the browser and the server's refusal shown as it comes", async ({
  page,
  context,
}, testInfo) => {
  const order = await payOverApi(page);
  const sent = recordRefundRequests(page);
  await page.goto("/orders");
  const row = orderRow(page, order.id);

  await row.getByTestId("refund-partial").click();
  const amount = row.getByLabel(/Amount to refund/);
  await expect(amount).toBeFocused();
  // Checked before anything is sent.
  await amount.fill("twelve");
  await row.getByTestId("refund-button").click();
  await expect(row.getByTestId("refund-invalid")).toContainText("Enter an amount such as");
  await expect(amount).toHaveAttribute("aria-invalid", "true");
  await expect(amount).toBeFocused();
  await amount.fill(((order.amount + 1) / 100).toFixed(2));
  await row.getByTestId("refund-button").click();
  await expect(row.getByTestId("refund-invalid")).toContainText(
    `Only $${(order.amount / 100).toFixed(2)} is left to refund`,
  );
  expect(sent).toHaveLength(0);
  await lookAt(page, testInfo, "orders-refund-invalid", row);

  await amount.fill("12.50");
  await expect(row.getByTestId("refund-button")).toHaveText("Refund $12.50");
  await row.getByTestId("refund-button").click();
  await expect(row.getByTestId("refund-row")).toHaveCount(1);
  await expect(row.getByTestId("order-refunds")).toHaveAttribute(
    "data-left",
    String(order.amount - 1250),
  );
  await expect(row.getByTestId("refund-balance")).toHaveText(
    `Refunded $12.50 of $${(order.amount / 100).toFixed(2)} · $${((order.amount - 1250) / 100).toFixed(2)} left`,
  );
  await expect(row.getByTestId("refund-check")).toContainText(
    "The provider holds the same 1 refund",
  );
  await lookAt(page, testInfo, "orders-refund-partial", row);

  // A second tab with the page as it is now: it will not know of the refund of the rest.
  const stale = await context.newPage();
  await stale.goto("/orders");
  const staleRow = orderRow(stale, order.id);
  await expect(staleRow.getByTestId("refund-button")).toBeVisible();

  // The rest: once refunded, the control puts the field away and offers all that is left again.
  await expect(row.getByLabel(/Amount to refund/)).toHaveCount(0);
  await expect(row.getByTestId("refund-button")).toHaveText(
    `Refund $${((order.amount - 1250) / 100).toFixed(2)}`,
  );
  await row.getByTestId("refund-button").click();
  await expect(row.getByTestId("refund-row")).toHaveCount(2);
  expect(await refundHistory(row)).toEqual([
    { status: "succeeded", amount: 1250 },
    { status: "succeeded", amount: order.amount - 1250 },
  ]);
  await expect(row.getByTestId("refund-button")).toHaveCount(0);
  await expect(row.getByTestId("refund-balance")).toContainText("Refunded in full");
  await expect(row.getByTestId("order-refunds")).toHaveAttribute("data-verdict", "agree");
  await expect(row.getByTestId("refund-status")).toBeFocused();

  // The stale tab asks for the rest too: the server's 422, its detail as the server wrote it.
  await staleRow.getByTestId("refund-button").click();
  const alert = staleRow.getByTestId("refund-alert");
  await expect(alert).toContainText(`Not refunded: Order ${order.id} is refunded in full`);
  await expect(alert).toBeFocused();
  await stale.close();

  // Our records and the provider's: two refunds, together what was charged.
  const ours = await refundsOfOrder(order.id);
  expect(ours.refunds.map((refund) => [refund.status, refund.amount])).toEqual([
    ["succeeded", 1250],
    ["succeeded", order.amount - 1250],
  ]);
  expect(ours.refundedAmount).toBe(order.amount);
  expect(
    (await providerRefundsOfOrder(order.id)).map((refund) => [refund.id, refund.amount]),
  ).toEqual(ours.refunds.map((refund) => [refund.provider_refund_id, refund.amount]));
  // Two presses on this page, each under its own key: a press after an answer is a new refund.
  expect(sent).toHaveLength(2);
  expect(new Set(sent).size).toBe(2);
  await lookAt(page, testInfo, "orders-refund-full", row);
});

test("ledger: a refund the provider holds that we never recorded is said loudly, beside the order", async ({
  page,
  baseURL,
}, testInfo) => {
  const order = await payOverApi(page);
  await page.goto("/orders");
  const row = orderRow(page, order.id);
  await row.getByTestId("refund-partial").click();
  await row.getByLabel(/Amount to refund/).fill("10");
  await row.getByTestId("refund-button").click();
  await expect(row.getByTestId("refund-row")).toHaveCount(1);
  await expect(page.getByTestId("ledger-refund-summary")).toHaveCount(0);

  // Someone refunds at the provider behind the shop's back (its dashboard, say): the
  // provider's records now hold a refund that ours do not.
  const ourRefund = (await refundsOfOrder(order.id)).refunds[0]!.provider_refund_id;
  const paymentIntent = await page.request
    .get(`/api/orders/${order.id}`)
    .then(async (response) => (await response.json()).payment.id as string);
  const provider = new StripePaymentProvider({
    secretKey: LOCAL_SIMULATOR_SECRET_KEY,
    simulatorUrl: `http://127.0.0.1:${e2eSimulatorPort(Number(new URL(baseURL!).port))}`,
  });
  const behindOurBack = await provider.refund({
    providerPaymentId: paymentIntent,
    amount: 500,
    idempotencyKey: `dashboard-${randomUUID()}`,
  });
  expect(behindOurBack.status).toBe("succeeded");
  expect((await providerRefundsOfOrder(order.id)).map((refund) => refund.amount)).toEqual([
    1000, 500,
  ]);
  expect((await refundsOfOrder(order.id)).refunds).toHaveLength(1);

  await page.reload();
  await expect(page.getByTestId("ledger-refund-summary")).toHaveAttribute("data-wrong", "1");
  await expect(row.getByTestId("order-refunds")).toHaveAttribute("data-verdict", "disagree");
  await expect(row.getByTestId("refund-damage")).toHaveText(
    "Refunds disagree with the provider: the payment provider holds 2 refunds ($15.00), our records 1 refund ($10.00).",
  );
  const unrecorded = row.getByTestId("provider-refund");
  await expect(unrecorded).toHaveCount(1);
  await expect(unrecorded).toHaveAttribute("data-match", "unrecorded");
  await expect(unrecorded).toContainText(
    behindOurBack.status === "succeeded" ? behindOurBack.providerRefundId : "",
  );
  // Our own refund is not among the disputed ones.
  await expect(unrecorded).not.toContainText(ourRefund!);
  await lookAt(page, testInfo, "orders-refund-disagreement", row);
});

test("key page: a refund's key, from the orders page, shows the refund's whole life and the provider's refund", async ({
  page,
}, testInfo) => {
  const order = await payOverApi(page);
  await page.goto("/orders");
  const row = orderRow(page, order.id);
  await row.getByTestId("refund-partial").click();
  await row.getByLabel(/Amount to refund/).fill("7.25");
  await row.getByTestId("refund-button").click();
  await expect(row.getByTestId("refund-row")).toHaveCount(1);
  const [refund] = (await refundsOfOrder(order.id)).refunds;
  const [atProvider] = await providerRefundsOfOrder(order.id);

  await row.getByTestId("refund-row-key").click();
  await expect(page).toHaveURL(/\/keys\//);
  await expect(page.getByTestId("key-operation")).toHaveAttribute("data-operation", "refund");
  await expect(page.getByTestId("key-state")).toHaveAttribute("data-state", "complete");
  await expect(page.getByTestId("key-recovery-point")).toHaveText("finished");
  expect(
    await page
      .getByTestId("key-timeline")
      .locator("li")
      .evaluateAll((steps) =>
        steps.map((step) => [step.getAttribute("data-point"), step.getAttribute("data-reached")]),
      ),
  ).toEqual([
    ["claimed", "true"],
    ["refundStarted", "true"],
    ["providerAnswered", "true"],
    ["finished", "true"],
  ]);
  await expect(page.getByTestId("key-stored-request")).toHaveText(
    `POST /api/orders/${order.id}/refunds`,
  );
  await expect(page.getByTestId("key-response-status")).toHaveText("201");
  // The provider's side, as the simulator's own table holds it.
  await expect(page.getByTestId("key-provider-key")).toHaveText(atProvider!.provider_key!);
  await expect(page.getByTestId("key-provider-refunds")).toHaveAttribute("data-refunds", "1");
  await expect(page.getByTestId("key-provider-refund")).toContainText(atProvider!.id);
  await expect(page.getByTestId("key-refund")).toHaveAttribute("data-status", "succeeded");
  await expect(page.getByTestId("key-refund-provider-id")).toHaveText(refund!.provider_refund_id!);
  await expect(page.getByTestId("key-refund")).toContainText("$7.25");
  await lookAt(page, testInfo, "key-refund");
});
