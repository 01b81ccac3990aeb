import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { expect, test, type BrowserContext, type Page } from "@playwright/test";
import { accountIdOf, closeDatabase, ordersOf } from "@/lib/testing/e2e/database";

/**
 * A neighbour on the same host tosses a session cookie into the shopper's
 * browser. Cookies are not separated by port, so any server on 127.0.0.1
 * can: this one, on a port of its own, answers its page with
 * `Set-Cookie: oncepay_session=…; Path=/api`, which Chromium then sends to
 * the shop's API ahead of the shop's own cookie, and not to its pages.
 *
 * Before, the API took the first cookie and the pages the last: with the
 * neighbour's own server-signed token the shopper paid into the
 * neighbour's account, and with a forged one every Pay was a 401 that no
 * reload cured. Now a request with two is trusted as neither, its 401
 * expires the tossed one, and the checkout sends the same key again (the
 * one refusal it retries), which pays into the shopper's own account.
 */
let neighbour: http.Server;
let neighbourUrl: string;
/** What the neighbour's page sets: a Set-Cookie value, given per test. */
let planted = "";

test.beforeAll(async () => {
  neighbour = http.createServer((_request, response) => {
    response.writeHead(200, { "Content-Type": "text/html", "Set-Cookie": planted });
    response.end("<!doctype html><title>Neighbour</title><p>Nothing to see here.</p>");
  });
  neighbour.listen(0, "127.0.0.1");
  await once(neighbour, "listening");
  neighbourUrl = `http://127.0.0.1:${(neighbour.address() as AddressInfo).port}/`;
});

test.afterAll(async () => {
  neighbour.close();
  await closeDatabase();
});

/** The neighbour's own session from the shop: a token the shop signed, as any visitor can get. */
async function neighboursSession(baseURL: string): Promise<string> {
  const cookie = (await fetch(`${baseURL}/`)).headers.get("set-cookie")?.split(";")[0];
  if (!cookie?.startsWith("oncepay_session=")) throw new Error("the shop handed out no session");
  return cookie.slice("oncepay_session=".length);
}

async function visitNeighbourPlanting(page: Page, cookie: string): Promise<void> {
  planted = cookie;
  await page.goto(neighbourUrl);
  await expect(page.getByText("Nothing to see here.")).toBeVisible();
}

async function payForAMug(page: Page): Promise<void> {
  await page.goto("/");
  await page.getByRole("button", { name: "Add Stoneware Mug to cart" }).click();
  await page.getByRole("button", { name: /^Pay/ }).click();
}

const sessionCookies = async (context: BrowserContext) =>
  (await context.cookies()).filter((cookie) => cookie.name === "oncepay_session");

/** The answers the page got from the API that refused it for carrying two sessions. */
function recordRefusals(page: Page): string[] {
  const refusals: string[] = [];
  page.on("response", async (response) => {
    if (!response.url().includes("/api/") || response.status() !== 401) return;
    const detail = ((await response.json()) as { detail: string }).detail;
    if (detail.includes("more than one session cookie"))
      refusals.push(new URL(response.url()).pathname);
  });
  return refusals;
}

test("the neighbour's own session tossed for /api: the shop's first API call is refused and expires it, and the Pay is the shopper's", async ({
  page,
  context,
  baseURL,
}, testInfo) => {
  const token = await neighboursSession(baseURL!);
  await page.goto("/"); // the shopper's own session
  await visitNeighbourPlanting(page, `oncepay_session=${token}; Path=/api`);
  expect((await sessionCookies(context)).map((cookie) => cookie.path).sort()).toEqual([
    "/",
    "/api",
  ]);
  const refusals = recordRefusals(page);

  await page.goto("/");
  await expect
    .poll(async () => (await sessionCookies(context)).map((cookie) => cookie.path))
    .toEqual(["/"]);
  await expect.poll(() => refusals.length).toBeGreaterThanOrEqual(1);
  await page.screenshot({ path: testInfo.outputPath("tossed-repaired.png"), fullPage: true });

  await page.getByRole("button", { name: "Add Stoneware Mug to cart" }).click();
  await page.getByRole("button", { name: /^Pay/ }).click();
  await expect(page.getByTestId("order-confirmation")).toBeVisible();
  const orderId = (await page.getByTestId("order-id").textContent())?.trim();
  expect(await ordersOf(await accountIdOf(context))).toEqual([{ id: orderId, total_amount: 1800 }]);
  const neighbourList = await fetch(`${baseURL}/api/orders`, {
    headers: { Cookie: `oncepay_session=${token}` },
  });
  expect(((await neighbourList.json()) as { data: unknown[] }).data).toEqual([]);
  await page.goto("/orders");
  await expect(page.getByText(orderId!)).toBeVisible();
});

test("a forged cookie tossed for /api/orders: the Pay's first attempt is refused and expires it, and its retry pays once", async ({
  page,
  context,
}, testInfo) => {
  await page.goto("/");
  await visitNeighbourPlanting(page, "oncepay_session=ops_forged.forged; Path=/api/orders");
  const refusals = recordRefusals(page);

  await payForAMug(page);
  await expect(page.getByTestId("order-confirmation")).toBeVisible();
  await page.screenshot({ path: testInfo.outputPath("tossed-retried.png"), fullPage: true });
  await expect.poll(() => refusals).toEqual(["/api/orders"]);
  expect((await sessionCookies(context)).map((cookie) => cookie.path)).toEqual(["/"]);
  const orderId = (await page.getByTestId("order-id").textContent())?.trim();
  expect(await ordersOf(await accountIdOf(context))).toEqual([{ id: orderId, total_amount: 1800 }]);
});

test("a cookie tossed for a page's path: that load shows no account, and the next shows the shopper's orders", async ({
  page,
  context,
  baseURL,
}) => {
  await payForAMug(page);
  await expect(page.getByTestId("order-confirmation")).toBeVisible();
  const orderId = (await page.getByTestId("order-id").textContent())?.trim();
  await visitNeighbourPlanting(
    page,
    `oncepay_session=${await neighboursSession(baseURL!)}; Path=/orders`,
  );

  await page.goto("/orders");
  await expect(page.getByText(orderId!)).toHaveCount(0);
  expect((await sessionCookies(context)).map((cookie) => cookie.path)).toEqual(["/"]);

  await page.reload();
  await expect(page.getByText(orderId!)).toBeVisible();
});
