import { expect, test, type Page, type Request, type Response } from "@playwright/test";
import { accountIdOf, closeDatabase, keyRequestsOf } from "@/lib/testing/e2e/database";

/**
 * The key page lists every request that presented the key, beside the
 * server's steps: a double click pays once, and its page shows both
 * requests in the order they arrived, each as the server answered it. What
 * the page lists is checked against the rows the server recorded.
 */
test.afterAll(closeDatabase);

// As in the demos' spec: tall enough that the cart column shows the Pay
// button and the attempts timeline without scrolling.
test.use({ viewport: { width: 1280, height: 1300 } });

/** The key page's list of requests, as data. */
async function listedRequests(page: Page) {
  return page.getByTestId("key-request").evaluateAll((entries) =>
    entries.map((entry) => ({
      attempt: Number(entry.getAttribute("data-attempt")),
      requestId: entry.getAttribute("data-request-id"),
      status: Number(entry.getAttribute("data-status")),
      answer: entry.getAttribute("data-answer"),
    })),
  );
}

test("key page: a double click's requests, in the order they arrived, beside the server's steps", async ({
  page,
  context,
}, testInfo) => {
  // Every payment POST the browser sent, and every answer it got, with its X-Request-Id.
  const isPayment = (request: Request) =>
    request.method() === "POST" && new URL(request.url()).pathname === "/api/orders";
  let sent = 0;
  page.on("request", (request) => void (isPayment(request) && sent++));
  const answered: Response[] = [];
  page.on(
    "response",
    (response) => void (isPayment(response.request()) && answered.push(response)),
  );

  await page.goto("/");
  await page.getByRole("radio", { name: "Double-click", exact: true }).check();
  await expect(page.getByTestId("demo-status")).toContainText("Armed: Double-click.");
  await page.getByRole("button", { name: "Add House Blend Beans to cart" }).click();
  await page.getByRole("button", { name: /^Pay/ }).dblclick();
  await expect(page.getByTestId("order-confirmation")).toBeVisible({ timeout: 40_000 });
  await expect(page.getByTestId("demo-status")).toContainText("Double-click finished", {
    timeout: 30_000,
  });
  const key = (await page.getByTestId("timeline-key").textContent())!.trim();
  expect(answered.length).toBeGreaterThanOrEqual(2);

  // The key page at a laptop's size from the start, as its screenshot shows it.
  // Leaving the shop ends its retries: from here on the browser sends no
  // payment, though a busy machine may still be answering one it sent (or
  // one the leaving cut off).
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.getByTestId("inspect-key").click();
  await expect(page.getByTestId("key-name")).toHaveText(key);

  // The server recorded each request the browser got an answer to, once the answer was known.
  const accountId = await accountIdOf(context);
  const answeredIds = answered.map((response) => response.headers()["x-request-id"]);
  await expect
    .poll(async () => (await keyRequestsOf(accountId, key)).rows.map((row) => row.request_id))
    .toEqual(expect.arrayContaining(answeredIds));
  const { rows } = await keyRequestsOf(accountId, key);
  expect(rows.length).toBeLessThanOrEqual(sent);
  // One request paid; the others were told to wait (409) or given the stored order (replay).
  expect(rows.filter((row) => row.answer === "completed")).toHaveLength(1);
  expect(rows.every((row) => ["completed", "conflict", "replay"].includes(row.answer))).toBe(true);

  // The page lists the database's rows, in the order they arrived, numbered from 1
  // (read again with the page, should a cut-off request have been recorded since).
  const asListed = async () =>
    (await keyRequestsOf(accountId, key)).rows.map((row, index) => ({
      attempt: index + 1,
      requestId: row.request_id,
      status: row.status,
      answer: row.answer,
    }));
  await expect
    .poll(async () => {
      await page.reload();
      await expect(page.getByTestId("key-name")).toHaveText(key);
      return JSON.stringify(await listedRequests(page)) === JSON.stringify(await asListed());
    })
    .toBe(true);
  // In words a shopper reads: which attempt, when, and what the server answered.
  const first = page.getByTestId("key-request").first();
  await expect(first).toContainText("Your browser's 1st attempt");
  await expect(page.getByTestId("key-request").nth(1)).toContainText("Your browser's 2nd attempt");
  const pageText = await page.getByRole("main").innerText();
  expect(pageText).not.toMatch(/The row|INSERT|ON CONFLICT/);
  await expect(page.getByText(/A hash of the request/)).toBeVisible();
  // Beside the server's steps, each reached.
  await expect(page.getByTestId("key-timeline").locator("li[data-reached=true]")).toHaveCount(4);

  await page.screenshot({ path: testInfo.outputPath("key-requests-laptop.png"), fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.screenshot({ path: testInfo.outputPath("key-requests-phone.png"), fullPage: true });
});
