import { expect, test, type Page, type Request } from "@playwright/test";
import {
  accountIdOf,
  closeDatabase,
  demoFaultsOf,
  idempotencyKeysOf,
  keyStateOf,
  ordersOf,
  paymentsOf,
} from "@/lib/testing/e2e/database";

/**
 * The demo lab, scenario by scenario, the way a person runs it: arm a
 * scenario in the demo panel, fill the cart, press Pay. Each test checks the
 * database (orders, payments, keys), not only the page, and saves a
 * screenshot of the final state. Every test has its own browser context, so
 * its own session and account: one scenario's faults never reach another.
 */

test.afterAll(closeDatabase);

// Tall enough that the cart column (sticky, scrolling on its own on short
// screens) shows the whole attempts timeline in the full-page screenshot.
test.use({ viewport: { width: 1280, height: 1300 } });

interface SentPayment {
  request: Request;
  key: string | null;
  /** Whether the whole answer arrived ("finished") or the request broke off ("failed"). */
  settled: Promise<"finished" | "failed">;
}

/** Every payment POST the page sends to `path` (across reloads), in order. */
function recordPayments(page: Page, path: string): SentPayment[] {
  const sent: SentPayment[] = [];
  const settle = new Map<Request, (how: "finished" | "failed") => void>();
  page.on("request", (request) => {
    if (request.method() === "POST" && new URL(request.url()).pathname === path) {
      const settled = new Promise<"finished" | "failed">((resolve) => settle.set(request, resolve));
      sent.push({ request, key: request.headers()["idempotency-key"] ?? null, settled });
    }
  });
  page.on("requestfinished", (request) => settle.get(request)?.("finished"));
  page.on("requestfailed", (request) => settle.get(request)?.("failed"));
  return sent;
}

/**
 * What each request got back: its status and replay flag, or null when no
 * whole answer arrived (no response at all, or one whose body broke off, the
 * way the lost-response fault drops the connection mid-answer).
 */
async function answers(sent: SentPayment[]) {
  return Promise.all(
    sent.map(async ({ request, settled }) => {
      if ((await settled) === "failed") return null;
      const response = await request.response();
      if (!response) return null;
      return {
        status: response.status(),
        replayed: (await response.allHeaders())["idempotent-replayed"] === "true",
      };
    }),
  );
}

/** The attempts timeline as data: one entry per row. */
async function timeline(page: Page) {
  return page.getByTestId("attempt").evaluateAll((rows) =>
    rows.map((row) => ({
      state: row.getAttribute("data-state"),
      status: row.getAttribute("data-status"),
      replayed: row.getAttribute("data-replayed") === "true",
    })),
  );
}

/**
 * Records every text the checkout status shows, from the first paint of each
 * page load on (a reload starts a new record), so a test can check a state
 * that lasts only as long as one request.
 */
async function recordStatusTexts(page: Page) {
  await page.addInitScript(() => {
    const seen: string[] = [];
    Object.assign(window, { __oncepayStatusTexts: seen });
    new MutationObserver(() => {
      const text = document.querySelector('[data-testid="checkout-status"]')?.textContent;
      if (text && text !== seen.at(-1)) seen.push(text);
    }).observe(document, { subtree: true, childList: true, characterData: true });
  });
}

async function statusTexts(page: Page): Promise<string[]> {
  return page.evaluate(
    () => (window as unknown as { __oncepayStatusTexts: string[] }).__oncepayStatusTexts,
  );
}

async function arm(page: Page, scenario: string) {
  await page.getByRole("radio", { name: scenario, exact: true }).check();
  await expect(page.getByTestId("demo-status")).toContainText(`Armed: ${scenario}.`);
}

/** The panel disarms a scenario (and switches its faults off) once every run of the payment has finished. */
async function expectScenarioFinished(page: Page, scenario: string) {
  await expect(page.getByTestId("demo-status")).toContainText(`${scenario} finished`, {
    timeout: 30_000,
  });
}

/** Full-page screenshot from the top, so the sticky cart column sits where a reader expects it. */
async function screenshot(page: Page, path: string) {
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path, fullPage: true });
}

async function paidOrderId(page: Page): Promise<string> {
  await expect(page.getByTestId("order-confirmation")).toBeVisible({ timeout: 40_000 });
  return (await page.getByTestId("order-id").textContent())?.trim() ?? "";
}

test("demo: double-click sends two overlapping requests with one key, and the server makes one order", async ({
  page,
  context,
}, testInfo) => {
  const sent = recordPayments(page, "/api/orders");
  // Event order as the browser reports it: did the second request leave before the first answer came back?
  const events: string[] = [];
  page.on(
    "request",
    (r) => r.method() === "POST" && r.url().endsWith("/api/orders") && events.push("sent"),
  );
  page.on(
    "response",
    (r) =>
      r.request().method() === "POST" && r.url().endsWith("/api/orders") && events.push("answered"),
  );

  await page.goto("/");
  await arm(page, "Double-click");
  await page.getByRole("button", { name: "Add House Blend Beans to cart" }).click();
  await page.getByRole("button", { name: /^Pay/ }).dblclick();

  const orderId = await paidOrderId(page);
  await expectScenarioFinished(page, "Double-click");

  // Two requests really overlapped, both with the intent's one key.
  expect(sent.length).toBeGreaterThanOrEqual(2);
  expect(events.slice(0, 2)).toEqual(["sent", "sent"]);
  const key = sent[0]?.key;
  expect(key).toMatch(/^[0-9a-f-]{36}$/);
  expect(sent.every((s) => s.key === key)).toBe(true);

  // Exactly one answer created the order; the other asked to wait for it
  // (Prefer: wait), and got its answer, replayed, instead of a 409.
  const got = await answers(sent);
  expect(got.filter((a) => a?.status === 201 && !a.replayed)).toHaveLength(1);
  expect(got.every((a) => a !== null && a.status === 201)).toBe(true);
  await expect(page.getByTestId("attempt-waited")).toHaveText([
    /^Waited \d+(\.\d+)? m?s for the first attempt, and got its answer$/,
  ]);

  // The timeline shows every attempt under the one key.
  const rows = await timeline(page);
  expect(rows).toHaveLength(sent.length);
  expect(rows.every((row) => row.state === "done")).toBe(true);
  await expect(page.getByTestId("timeline-key")).toHaveText(key!);
  await expect(page.getByTestId("attempts-summary")).toHaveText(
    `${sent.length} attempts, 1 key, 1 order`,
  );

  const accountId = await accountIdOf(context);
  expect(await ordersOf(accountId)).toEqual([{ id: orderId, total_amount: 1450 }]);
  expect(await paymentsOf(accountId)).toEqual([{ status: "succeeded", amount: 1450 }]);
  expect(await idempotencyKeysOf(accountId)).toEqual([
    { key, response_status: 201, order_id: orderId },
  ]);

  await screenshot(page, testInfo.outputPath("double-click.png"));
});

test("demo: slow network times out the first attempt, and the retry waits for it and gets the replay", async ({
  page,
  context,
}, testInfo) => {
  test.setTimeout(90_000);
  const sent = recordPayments(page, "/api/orders");
  await recordStatusTexts(page);

  await page.goto("/");
  await arm(page, "Slow network");
  await page.getByLabel("Server holds each payment for").selectOption("8000");
  await expect(page.getByTestId("demo-status")).toContainText("Armed: Slow network.");
  await page.getByRole("button", { name: "Add Stoneware Mug to cart" }).click();

  // A slow link on top of the slow server: every request and answer takes its time.
  const cdp = await context.newCDPSession(page);
  await cdp.send("Network.emulateNetworkConditions", {
    offline: false,
    latency: 400,
    downloadThroughput: 50 * 1024,
    uploadThroughput: 50 * 1024,
  });

  await page.getByRole("button", { name: /^Pay/ }).click();
  await expect(page.getByTestId("checkout-status")).toHaveText("Paying…");

  const orderId = await paidOrderId(page);
  await expectScenarioFinished(page, "Slow network");
  await expect(page.getByTestId("checkout-status")).toHaveText(
    "Paid (replayed: the stored result of this key, no second charge)",
  );
  // The 6 s attempt timeout fired while the server still held the payment (8 s),
  // and the status said so. The retry's own status lasts only as long as its
  // request, so the test reads the recorded history rather than racing it.
  const said = await statusTexts(page);
  expect(said[0]).toBe("Paying…");
  expect(said).toContainEqual(expect.stringMatching(/^Retrying \(2 of 12\)/));
  expect(said.findIndex((text) => text.startsWith("Retrying (2 of 12)"))).toBeLessThan(
    said.findIndex((text) => text.startsWith("Paid")),
  );

  // The retry asked the server to wait for the attempt it still held
  // (Prefer: wait), and got its answer, replayed; a 409 only if that wait
  // ran out first.
  const rows = await timeline(page);
  expect(rows[0]).toEqual({ state: "done", status: "timeout", replayed: false });
  expect(rows.slice(1, -1).every((row) => row.status === "409")).toBe(true);
  expect(rows.at(-1)).toEqual({ state: "done", status: "201", replayed: true });
  await expect(page.getByTestId("attempt-waited").last()).toHaveText(
    /^Waited \d+(\.\d+)? m?s for the first attempt, and got its answer$/,
  );

  expect(sent).toHaveLength(rows.length);
  const key = sent[0]?.key;
  expect(sent.every((s) => s.key === key)).toBe(true);
  await expect(page.getByTestId("attempts-summary")).toHaveText(
    `${rows.length} attempts, 1 key, 1 order`,
  );

  const accountId = await accountIdOf(context);
  expect(await ordersOf(accountId)).toEqual([{ id: orderId, total_amount: 1800 }]);
  expect(await paymentsOf(accountId)).toEqual([{ status: "succeeded", amount: 1800 }]);
  expect(await idempotencyKeysOf(accountId)).toEqual([
    { key, response_status: 201, order_id: orderId },
  ]);
  // The scenario switched its fault off when the payment settled.
  expect(await demoFaultsOf(accountId)).toEqual({ networkDelayMs: 0, loseResponse: false });

  await cdp.send("Network.emulateNetworkConditions", {
    offline: false,
    latency: 0,
    downloadThroughput: -1,
    uploadThroughput: -1,
  });
  await screenshot(page, testInfo.outputPath("slow-network.png"));
});

test("demo: lost response is retried with the same key and answered with the stored result", async ({
  page,
  context,
}, testInfo) => {
  const sent = recordPayments(page, "/api/orders");

  await page.goto("/");
  await arm(page, "Lost response");
  await page.getByRole("button", { name: "Add Gooseneck Kettle to cart" }).click();
  await page.getByRole("button", { name: /^Pay/ }).click();

  const orderId = await paidOrderId(page);
  await expectScenarioFinished(page, "Lost response");

  // The first attempt's answer broke off before its body; the retry got the stored 201, marked as a replay.
  expect(sent).toHaveLength(2);
  expect(sent[0]?.key).toBe(sent[1]?.key);
  expect(await answers(sent)).toEqual([null, { status: 201, replayed: true }]);
  expect(await timeline(page)).toEqual([
    { state: "done", status: "network", replayed: false },
    { state: "done", status: "201", replayed: true },
  ]);
  await expect(page.getByTestId("attempts-summary")).toHaveText("2 attempts, 1 key, 1 order");
  await expect(page.getByTestId("order-replayed")).toContainText(
    "nothing was charged a second time",
  );
  await expect(page.getByTestId("order-replayed")).toHaveClass(/\bbg-sage-soft\b/);
  await expect(page.getByTestId("order-provider-charges")).toHaveText(
    "Charged once, as its own records show",
  );
  await expect(page.getByTestId("attempt-request-id")).toHaveCount(1);

  const accountId = await accountIdOf(context);
  expect(await ordersOf(accountId)).toEqual([{ id: orderId, total_amount: 5900 }]);
  expect(await paymentsOf(accountId)).toEqual([{ status: "succeeded", amount: 5900 }]);
  expect(await idempotencyKeysOf(accountId)).toEqual([
    { key: sent[0]?.key, response_status: 201, order_id: orderId },
  ]);
  expect(await demoFaultsOf(accountId)).toEqual({ networkDelayMs: 0, loseResponse: false });

  await screenshot(page, testInfo.outputPath("lost-response.png"));
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.screenshot({ path: testInfo.outputPath("replayed-laptop.png") });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.getByTestId("order-confirmation").scrollIntoViewIfNeeded();
  await page.screenshot({ path: testInfo.outputPath("replayed-phone.png") });
});

test("demo: reloading mid-payment resumes the same key from sessionStorage and makes one order", async ({
  page,
  context,
}, testInfo) => {
  const sent = recordPayments(page, "/api/orders");
  await recordStatusTexts(page);

  await page.goto("/");
  await arm(page, "Reload mid-payment");
  await page.getByRole("button", { name: "Add Pour-Over Dripper to cart" }).click();
  await page.getByRole("button", { name: /^Pay/ }).click();

  // The server holds the first attempt for 5 s; reload while it does.
  await expect.poll(() => sent.length).toBe(1);
  const keyBeforeReload = await page.evaluate(() =>
    Object.entries(sessionStorage)
      .filter(([name]) => name.startsWith("oncepay.intent."))
      .map(([, value]) => JSON.parse(value).idempotencyKey),
  );
  expect(keyBeforeReload).toEqual([sent[0]?.key]);
  // Reload only once the server has claimed the key and is holding the payment.
  const accountId = await accountIdOf(context);
  await expect
    .poll(() => keyStateOf(accountId, sent[0]!.key!))
    .toEqual({ state: "in_flight", response_status: null });
  await Promise.all([
    page.waitForEvent("load"),
    page.getByRole("button", { name: "Reload the page now" }).click(),
  ]);

  // The new page finds the intent and resends it: the cart is back, the key is the same.
  const orderId = await paidOrderId(page);
  await expectScenarioFinished(page, "Reload mid-payment");
  // The status said so while the resumed attempt was on the wire.
  expect(await statusTexts(page)).toContainEqual(
    expect.stringMatching(/^Resuming the payment interrupted by the reload, with the same key…$/),
  );

  expect(sent.length).toBeGreaterThanOrEqual(2);
  const key = sent[0]?.key;
  expect(sent.every((s) => s.key === key)).toBe(true);
  await expect(page.getByTestId("timeline-key")).toHaveText(key!);
  const got = await answers(sent);
  expect(got[0]).toBeNull(); // the reload cut the first attempt off
  // While the server still held the first attempt, the resumed one waited for
  // it (Prefer: wait) and got its answer, replayed; a 409 only if that wait ran out first.
  expect(got.length).toBeGreaterThanOrEqual(2);
  expect(got.slice(1, -1)).toEqual(got.slice(1, -1).map(() => ({ status: 409, replayed: false })));
  expect(got.at(-1)).toEqual({ status: 201, replayed: true });
  await expect(page.getByTestId("attempt-waited").last()).toHaveText(
    /^Waited \d+(\.\d+)? m?s for the first attempt, and got its answer$/,
  );

  const rows = await timeline(page);
  expect(rows[0]).toEqual({ state: "interrupted", status: "", replayed: false });
  expect(rows.slice(1, -1)).toEqual(
    rows.slice(1, -1).map(() => ({ state: "done", status: "409", replayed: false })),
  );
  expect(rows.at(-1)).toEqual({ state: "done", status: "201", replayed: true });
  expect(rows).toHaveLength(sent.length);
  await expect(page.getByTestId("attempts-summary")).toHaveText(
    `${sent.length} attempts, 1 key, 1 order`,
  );
  // The intent ended with the payment: nothing is left to resume.
  expect(
    await page.evaluate(() =>
      Object.keys(sessionStorage).filter((name) => name.startsWith("oncepay.intent.")),
    ),
  ).toEqual([]);

  expect(await ordersOf(accountId)).toEqual([{ id: orderId, total_amount: 2600 }]);
  expect(await paymentsOf(accountId)).toEqual([{ status: "succeeded", amount: 2600 }]);
  expect(await idempotencyKeysOf(accountId)).toEqual([
    { key, response_status: 201, order_id: orderId },
  ]);
  expect(await demoFaultsOf(accountId)).toEqual({ networkDelayMs: 0, loseResponse: false });

  await screenshot(page, testInfo.outputPath("reload-mid-payment.png"));
});

/**
 * Records every outcome the paid-order box shows, from the first paint on,
 * so a test can say a state was never shown, however briefly.
 */
async function recordOutcomes(page: Page) {
  await page.addInitScript(() => {
    const seen: string[] = [];
    Object.assign(window, { __oncepayOutcomes: seen });
    new MutationObserver(() => {
      const box = document.querySelector('[data-testid="order-confirmation"]');
      const heading = box?.querySelector("h2")?.textContent;
      const shown = box && `${box.getAttribute("data-outcome")}: ${heading}`;
      if (shown && shown !== seen.at(-1)) seen.push(shown);
    }).observe(document, { subtree: true, childList: true, characterData: true, attributes: true });
  });
}

async function outcomesShown(page: Page): Promise<string[]> {
  return page.evaluate(
    () => (window as unknown as { __oncepayOutcomes: string[] }).__oncepayOutcomes,
  );
}

test("demo: without a key (the broken strategy) the lost response's retry charges a second time, and the shop leads with the damage", async ({
  page,
  context,
}, testInfo) => {
  const unsafe = recordPayments(page, "/api/lab/unsafe-orders");
  const real = recordPayments(page, "/api/orders");
  await recordOutcomes(page);

  await page.goto("/");
  await arm(page, "No key (broken)");
  await page.getByRole("button", { name: "Add Paper Filters to cart" }).click();
  await page.getByRole("button", { name: "Pay $6.50 without a key" }).click();

  const confirmation = page.getByTestId("order-confirmation");
  await expect(confirmation).toHaveAttribute("data-outcome", "damaged", { timeout: 40_000 });
  await expectScenarioFinished(page, "No key (broken)");
  await expect(page.getByTestId("timeline-key")).toHaveText(
    "No Idempotency-Key sent (broken strategy)",
  );

  // Only the lab endpoint was used, never the real one, and no request carried a key.
  expect(real).toEqual([]);
  expect(unsafe.map((s) => s.key)).toEqual([null, null]);
  expect(await answers(unsafe)).toEqual([null, { status: 201, replayed: false }]);
  expect(await timeline(page)).toEqual([
    { state: "done", status: "network", replayed: false },
    { state: "done", status: "201", replayed: false },
  ]);

  // One purchase, two orders, two charges: the bug an Idempotency-Key prevents.
  const accountId = await accountIdOf(context);
  const orders = await ordersOf(accountId);
  expect(orders).toHaveLength(2);
  expect(orders.map((o) => o.total_amount)).toEqual([650, 650]);
  const payments = await paymentsOf(accountId);
  expect(payments).toEqual([
    { status: "succeeded", amount: 650 },
    { status: "succeeded", amount: 650 },
  ]);
  expect(await idempotencyKeysOf(accountId)).toEqual([]);

  // The shop leads with that damage, as the records count it, in the error style...
  const charged = payments.reduce((sum, payment) => sum + payment.amount, 0);
  const headline = `Charged twice: $${(charged / 100).toFixed(2)}, ${orders.length} orders`;
  const damage = page.getByTestId("purchase-damage");
  await expect(damage).toHaveAttribute("role", "alert");
  await expect(damage).toHaveClass(/\bbg-berry\b/);
  await expect(page.getByTestId("purchase-damage-headline")).toHaveText(headline);
  await expect(page.getByTestId("purchase-damage-headline")).toBeFocused();
  expect(
    await page
      .getByTestId("purchase-order")
      .evaluateAll((items) => items.map((item) => item.getAttribute("data-order-id"))),
  ).toEqual(orders.map((o) => o.id).reverse());
  // ...and never showed this purchase as a success, not even while it was being counted.
  await expect(confirmation.getByRole("heading", { name: "Order confirmed" })).toHaveCount(0);
  const shown = await outcomesShown(page);
  expect(shown.at(-1)).toBe(`damaged: ${headline}`);
  expect(shown.filter((outcome) => !/^(counting|damaged):/.test(outcome))).toEqual([]);

  await screenshot(page, testInfo.outputPath("no-key.png"));
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.screenshot({ path: testInfo.outputPath("no-key-laptop.png") });
  await page.setViewportSize({ width: 390, height: 844 });
  await confirmation.scrollIntoViewIfNeeded();
  await page.screenshot({ path: testInfo.outputPath("no-key-phone.png") });
});

test("demo panel: without demo faults on the server, the server-side scenarios say they are unavailable", async ({
  page,
}) => {
  // Stand in for a server started without DEMO_FAULTS=on (the test server has it on).
  await page.route("**/api/demo/settings", (route) =>
    route.fulfill({ json: { faultsEnabled: false, networkDelayMs: 0, loseResponse: false } }),
  );
  await page.goto("/");

  await expect(page.getByTestId("demo-unavailable")).toContainText("DEMO_FAULTS");
  for (const scenario of [
    "Slow network",
    "Lost response",
    "Reload mid-payment",
    "No key (broken)",
  ]) {
    await expect(page.getByRole("radio", { name: scenario, exact: true })).toBeDisabled();
  }
  await expect(page.getByRole("radio", { name: "Double-click", exact: true })).toBeEnabled();
});
