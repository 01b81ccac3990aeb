import { expect, test, type Page } from "@playwright/test";
import { PROVIDER_KEY_METADATA } from "@/lib/payments/stripe-provider";
import {
  accountIdOf,
  closeDatabase,
  idempotencyKeysOf,
  keyRow,
  ordersOf,
  paymentsOf,
  providerIntents,
} from "@/lib/testing/e2e/database";
import { chooseStormSize } from "./lab-page";

/**
 * The ledger (/orders) and the key inspector (/keys/{key}) as a shopper
 * reaches them: from the header, from the paid order, from the attempts
 * timeline. What they show is checked against our tables and the payment
 * simulator's ledger.
 */
test.afterAll(closeDatabase);

async function payFor(page: Page, product: string): Promise<{ orderId: string; key: string }> {
  await page.getByRole("button", { name: `Add ${product} to cart` }).click();
  await page.getByRole("button", { name: /^Pay/ }).click();
  await expect(page.getByTestId("order-confirmation")).toBeVisible();
  return {
    orderId: (await page.getByTestId("order-id").textContent())!.trim(),
    key: (await page.getByTestId("timeline-key").textContent())!.trim(),
  };
}

/** The ledger's order rows as data, each with the charges counted for its purchase. */
async function ledgerRows(page: Page) {
  return page.getByTestId("ledger-row").evaluateAll((rows) =>
    rows.map((row) => ({
      orderId: row.getAttribute("data-order-id"),
      source: row.getAttribute("data-source"),
      key: row.querySelector('[data-testid="ledger-key"]')?.textContent ?? null,
      charges: row
        .closest('[data-testid="ledger-purchase"]')
        ?.querySelector('[data-testid="ledger-charges"]')
        ?.getAttribute("data-charges"),
    })),
  );
}

/** The ledger's purchases as data: each with its orders, its verdict and its charges. */
async function ledgerPurchases(page: Page) {
  return page.getByTestId("ledger-purchase").evaluateAll((purchases) =>
    purchases.map((purchase) => {
      const charges = purchase.querySelector('[data-testid="ledger-charges"]');
      return {
        cartId: purchase.getAttribute("data-cart-id"),
        verdict: purchase.getAttribute("data-verdict"),
        orders: [...purchase.querySelectorAll('[data-testid="ledger-row"]')].map((row) =>
          row.getAttribute("data-order-id"),
        ),
        charges: charges?.getAttribute("data-charges"),
        errorStyle: charges?.classList.contains("bg-berry") ?? false,
        damage: purchase.querySelector('[data-testid="ledger-damage"]')?.textContent ?? null,
      };
    }),
  );
}

test("ledger: my orders, newest first, each with its key and the provider's one charge; nobody else's", async ({
  page,
  context,
  browser,
}, testInfo) => {
  await page.goto("/");
  const first = await payFor(page, "Stoneware Mug");
  await page.getByRole("button", { name: "Start a new order" }).click();
  const second = await payFor(page, "Paper Filters");
  // A purchase done right says so once the records are counted.
  await expect(page.getByTestId("order-confirmation")).toHaveAttribute("data-outcome", "confirmed");
  await expect(page.getByTestId("order-provider-charges")).toHaveText(
    "Charged once, as its own records show",
  );
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.getByTestId("order-confirmation").scrollIntoViewIfNeeded();
  await page.screenshot({ path: testInfo.outputPath("paid-laptop.png") });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.getByTestId("order-confirmation").scrollIntoViewIfNeeded();
  await page.screenshot({ path: testInfo.outputPath("paid-phone.png") });
  await page.setViewportSize({ width: 1280, height: 800 });

  await page.getByTestId("see-orders").click();
  await expect(page).toHaveURL(/\/orders$/);
  // Read the rows only once the ledger is on screen (the link navigates client-side).
  await expect(page.getByTestId("ledger-row")).toHaveCount(2);
  const rows = await ledgerRows(page);
  expect(rows).toEqual([
    { orderId: second.orderId, source: "checkout", key: second.key, charges: "1" },
    { orderId: first.orderId, source: "checkout", key: first.key, charges: "1" },
  ]);
  await expect(page.getByTestId("ledger-summary")).toHaveAttribute("data-wrong", "0");

  // The page's numbers are the database's and the provider's.
  const accountId = await accountIdOf(context);
  expect((await ordersOf(accountId)).map((order) => order.id).reverse()).toEqual([
    second.orderId,
    first.orderId,
  ]);
  for (const { key } of [first, second]) {
    const row = await keyRow(accountId, key);
    expect(
      await providerIntents({
        metadata: { [PROVIDER_KEY_METADATA]: row!.provider_key },
      }),
    ).toMatchObject({ succeeded: 1, total: 1 });
  }

  await page.screenshot({ path: testInfo.outputPath("orders-laptop.png"), fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.screenshot({ path: testInfo.outputPath("orders-phone.png"), fullPage: true });

  // Another browser is another account: none of these orders, and none of these keys.
  const stranger = await browser.newContext();
  const theirs = await stranger.newPage();
  await theirs.goto("/orders");
  await expect(theirs.getByText("No orders yet")).toBeVisible();
  expect(await theirs.getByTestId("ledger-row").count()).toBe(0);
  const foreignKey = await theirs.goto(`/keys/${encodeURIComponent(first.key)}`);
  expect(foreignKey?.status()).toBe(404);
  await expect(theirs.getByTestId("key-not-found")).toBeVisible();
  await stranger.close();
});

test("ledger: one cart paid twice without a key is one purchase of two orders, its two charges in red", async ({
  page,
  context,
}, testInfo) => {
  await page.goto("/");
  // What the No-key demo sends: the same cart twice, without an Idempotency-Key.
  const cart = {
    cartId: `cart_${crypto.randomUUID()}`,
    items: [{ sku: "filters-paper-100", quantity: 2 }],
  };
  const keyless: string[] = [];
  for (let i = 0; i < 2; i++) {
    const response = await page.request.post("/api/lab/unsafe-orders", { data: cart });
    expect(response.status()).toBe(201);
    keyless.push((await response.json()).id);
  }
  // And one purchase done right, after it.
  const right = await page.request.post("/api/orders", {
    headers: { "Idempotency-Key": crypto.randomUUID() },
    data: {
      cartId: `cart_${crypto.randomUUID()}`,
      items: [{ sku: "mug-ceramic-350", quantity: 1 }],
    },
  });
  expect(right.status()).toBe(201);
  const rightOrder = await right.json();

  await page.goto("/orders");
  await expect(page.getByTestId("ledger-purchase")).toHaveCount(2);
  const accountId = await accountIdOf(context);
  const orders = await ordersOf(accountId);
  const payments = await paymentsOf(accountId);
  // The database's facts: three orders, three charges, two of them for the keyless cart.
  expect(orders.map((order) => order.id)).toEqual([...keyless, rightOrder.id]);
  expect(payments.filter((payment) => payment.status === "succeeded")).toHaveLength(3);
  const keylessCharged = orders
    .filter((order) => keyless.includes(order.id))
    .reduce((sum, order) => sum + order.total_amount, 0);

  expect(await ledgerPurchases(page)).toEqual([
    {
      cartId: rightOrder.cartId,
      verdict: "charged-once",
      orders: [rightOrder.id],
      charges: "1",
      errorStyle: false,
      damage: null,
    },
    {
      cartId: cart.cartId,
      verdict: "charged-more-than-once",
      orders: [...keyless].reverse(),
      charges: String(keyless.length),
      errorStyle: true,
      damage: expect.stringContaining(
        `Charged twice: $${(keylessCharged / 100).toFixed(2)}, ${keyless.length} orders`,
      ),
    },
  ]);
  await expect(page.getByTestId("ledger-summary")).toHaveAttribute("data-wrong", "0");
  await expect(page.getByTestId("ledger-summary")).toHaveAttribute("data-broken", "1");

  await page.setViewportSize({ width: 1280, height: 800 });
  await page.screenshot({
    path: testInfo.outputPath("orders-purchases-laptop.png"),
    fullPage: true,
  });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.screenshot({
    path: testInfo.outputPath("orders-purchases-phone.png"),
    fullPage: true,
  });
});

test("ledger: pages of orders follow each other without a gap or a repeat", async ({
  page,
  context,
}) => {
  await page.goto("/");
  const made: string[] = [];
  for (let i = 0; i < 3; i++) {
    // The page's own session, as the shop's fetch sends it.
    const response = await page.request.post("/api/orders", {
      headers: { "Idempotency-Key": crypto.randomUUID(), "Content-Type": "application/json" },
      data: {
        cartId: `cart_${crypto.randomUUID()}`,
        items: [{ sku: "beans-house-250", quantity: 1 }],
      },
    });
    expect(response.status()).toBe(201);
    made.push((await response.json()).id);
  }
  expect((await ordersOf(await accountIdOf(context))).map((order) => order.id)).toEqual(made);

  await page.goto("/orders?limit=2");
  await expect(page.getByTestId("ledger-row")).toHaveCount(2);
  const firstPage = (await ledgerRows(page)).map((row) => row.orderId);
  await page.getByTestId("older-orders").click();
  await expect(page).toHaveURL(/starting_after=/);
  await expect(page.getByTestId("ledger-row")).toHaveCount(1);
  const secondPage = (await ledgerRows(page)).map((row) => row.orderId);
  await expect(page.getByTestId("older-orders")).toHaveCount(0);
  expect([...firstPage, ...secondPage]).toEqual([...made].reverse());
});

test("ledger: the lab's broken orders are marked, and their extra charges said loudly", async ({
  page,
  context,
}) => {
  await page.goto("/lab");
  await chooseStormSize(page, 2);
  await page.getByTestId("lab-run-no_key").click();
  await expect(page.getByTestId("lab-row-no_key")).not.toHaveAttribute("data-storm-id", "", {
    timeout: 30_000,
  });

  await page.getByRole("link", { name: "Orders", exact: true }).click();
  await expect(page).toHaveURL(/\/orders$/);
  await expect(page.getByTestId("ledger-row")).toHaveCount(2);
  const rows = await ledgerRows(page);
  expect(
    rows.every((row) => row.source === "lab_no_key" && row.key === null && row.charges === "2"),
  ).toBe(true);
  await expect(page.getByTestId("ledger-lab").first()).toContainText(
    "No key (broken on purpose), a storm of 2",
  );
  await expect(page.getByTestId("ledger-charges").first()).toContainText(
    "2 charges at the provider",
  );
  expect(await ordersOf(await accountIdOf(context))).toHaveLength(2);
});

test("key inspector: reached from the attempts timeline and from the ledger, it shows the key's whole life", async ({
  page,
  context,
}, testInfo) => {
  await page.goto("/");
  const paid = await payFor(page, "Gooseneck Kettle");
  const accountId = await accountIdOf(context);

  await page.getByTestId("inspect-key").click();
  await expect(page.getByTestId("key-name")).toHaveText(paid.key);
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
    ["paymentStarted", "true"],
    ["charged", "true"],
    ["finished", "true"],
  ]);
  const row = await keyRow(accountId, paid.key);
  const providerKey = row!.provider_key;
  await expect(page.getByTestId("key-provider-key")).toHaveText(providerKey);
  await expect(page.getByTestId("key-provider-charges")).toHaveAttribute("data-charges", "1");
  await expect(page.getByTestId("key-payment-intent")).toHaveCount(
    (await providerIntents({ metadata: { [PROVIDER_KEY_METADATA]: providerKey } })).total,
  );
  await expect(page.getByTestId("key-order")).toContainText(paid.orderId);
  expect(await idempotencyKeysOf(accountId)).toEqual([
    { key: paid.key, response_status: 201, order_id: paid.orderId },
  ]);
  await page.screenshot({ path: testInfo.outputPath("key-laptop.png"), fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.screenshot({ path: testInfo.outputPath("key-phone.png"), fullPage: true });

  // The same page from the ledger's link.
  await page.goto("/orders");
  await page.getByTestId("ledger-key").first().click();
  await expect(page.getByTestId("key-name")).toHaveText(paid.key);
});
