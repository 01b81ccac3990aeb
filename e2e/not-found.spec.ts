import { expect, test, type Page } from "@playwright/test";

/**
 * What a reader sees where there is nothing: an unknown path and an
 * unknown key answer 404 with the shop's own page and the ways on; and
 * the footer sits at the bottom of the window on a short page, after the
 * content on a long one.
 */

const WAYS_ON = [
  { name: /The shop/, href: "/" },
  { name: /Your orders/, href: "/orders" },
  { name: /The API reference/, href: "/docs/api" },
];

async function expectWaysOn(page: Page) {
  const ways = page.getByRole("navigation", { name: "Ways on" }).getByRole("link");
  await expect(ways).toHaveCount(WAYS_ON.length);
  for (const { name, href } of WAYS_ON)
    await expect(ways.filter({ hasText: name })).toHaveAttribute("href", href);
}

for (const { width, height, name } of [
  { width: 1280, height: 800, name: "laptop" },
  { width: 390, height: 844, name: "phone" },
]) {
  test(`an unknown path answers 404 with the shop's page and the ways on, at ${width} px`, async ({
    page,
  }, testInfo) => {
    await page.setViewportSize({ width, height });
    const answer = await page.goto("/nope");
    expect(answer?.status()).toBe(404);
    await expect(page).toHaveTitle("Page not found · OncePay Coffee Supply");
    await expect(page.getByRole("heading", { level: 1 })).toHaveText("No page here");
    // The shop's header and footer, with no page of the navigation marked as current.
    await expect(page.getByRole("navigation", { name: "Main" })).toBeVisible();
    await expect(page.locator('[aria-current="page"]')).toHaveCount(0);
    await expect(page.getByTestId("demo-notice")).toBeVisible();
    await expectWaysOn(page);
    // The page's own styles are applied: the heading is the shop's display face, not a default.
    const font = await page
      .getByRole("heading", { level: 1 })
      .evaluate((heading) => getComputedStyle(heading).fontFamily);
    const bodyFont = await page.evaluate(() => getComputedStyle(document.body).fontFamily);
    expect(font).not.toBe(bodyFont);
    await page.screenshot({ path: testInfo.outputPath(`not-found-${name}.png`) });
  });
}

test("an unknown key answers 404 with its own message and the same ways on", async ({ page }) => {
  const answer = await page.goto(`/keys/${encodeURIComponent("no-such-key-anywhere")}`);
  expect(answer?.status()).toBe(404);
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("No such key");
  await expect(page.getByTestId("key-not-found")).toBeVisible();
  await expectWaysOn(page);
  await page.getByRole("link", { name: /The API reference/ }).click();
  await expect(page).toHaveURL(/\/docs\/api$/);
  await expect(page.getByRole("heading", { level: 1, name: "OncePay API" })).toBeVisible();
});

/** Where the footer is against the window and the page, in CSS pixels. */
function footerPlace(page: Page) {
  return page.evaluate(() => {
    const footer = document.querySelector("footer")!.getBoundingClientRect();
    const main = document.querySelector("main")!.getBoundingClientRect();
    return {
      footerTop: footer.top + window.scrollY,
      footerBottom: footer.bottom + window.scrollY,
      mainBottom: main.bottom + window.scrollY,
      viewportHeight: window.innerHeight,
      pageHeight: document.documentElement.scrollHeight,
    };
  });
}

test("the footer sits at the bottom of the window on a short page, and after the content on a long one", async ({
  page,
}, testInfo) => {
  await page.setViewportSize({ width: 1280, height: 800 });

  for (const path of ["/nope", "/orders"]) {
    await page.goto(path);
    if (path === "/orders") await expect(page.getByText("No orders yet")).toBeVisible();
    const place = await footerPlace(page);
    expect(place.pageHeight, path).toBe(place.viewportHeight);
    expect(place.footerBottom, path).toBeCloseTo(place.viewportHeight, 0);
    expect(place.footerTop, path).toBeGreaterThanOrEqual(place.mainBottom);
  }
  await page.screenshot({ path: testInfo.outputPath("footer-short-page-laptop.png") });

  await page.goto("/docs/api");
  const long = await footerPlace(page);
  expect(long.pageHeight).toBeGreaterThan(long.viewportHeight);
  expect(long.footerTop).toBeGreaterThanOrEqual(long.mainBottom);
  expect(long.footerBottom).toBeCloseTo(long.pageHeight, 0);
});
