import { expect, test, type Page } from "@playwright/test";
import { duration } from "@/lib/openapi/duration";

/**
 * The API reference (/docs/api) as a reader reaches it: from the header's
 * API link. What it lists is checked against the document the server
 * publishes at /api/openapi.json, not against a copy kept here.
 */

interface PublishedDocument {
  paths: Record<
    string,
    Record<string, { operationId: string; tags: string[]; responses: Record<string, unknown> }>
  >;
}

async function published(page: Page) {
  const answer = await page.request.get("/api/openapi.json");
  expect(answer.status()).toBe(200);
  const document = (await answer.json()) as PublishedDocument & Record<string, unknown>;
  const checkout = document.paths["/api/orders"]!.post!;
  const served = Object.values(document.paths).flatMap((item) =>
    Object.entries(item)
      .filter(
        ([method, operation]) =>
          !["head", "options"].includes(method) && !operation.tags.includes("Not served"),
      )
      .map(([, operation]) => operation.operationId),
  );
  const policy = (
    checkout as unknown as {
      "x-idempotency-key": { retentionSeconds: number; leaseSeconds: number };
    }
  )["x-idempotency-key"];
  return { served, checkoutStatuses: Object.keys(checkout.responses), policy };
}

/** The page's operations and the checkout's answers, as the page marks them. */
async function shown(page: Page) {
  return {
    operations: await page
      .getByTestId("api-operation")
      .evaluateAll((entries) => entries.map((entry) => entry.getAttribute("data-operation-id"))),
    checkoutStatuses: await page
      .locator('#createOrder [data-testid="response-row"]')
      .evaluateAll((rows) => rows.map((row) => row.getAttribute("data-status"))),
  };
}

test("API reference: every operation and every checkout answer the published document has, and its key policy", async ({
  page,
}) => {
  const document = await published(page);
  await page.goto("/");
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "API" }).click();
  await expect(page).toHaveURL(/\/docs\/api$/);
  await expect(page.getByRole("heading", { level: 1, name: "OncePay API" })).toBeVisible();
  await expect(
    page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "API" }),
  ).toHaveAttribute("aria-current", "page");

  const onPage = await shown(page);
  expect(onPage.operations.sort()).toEqual(document.served.sort());
  expect(onPage.checkoutStatuses).toEqual(document.checkoutStatuses);

  const rules = page.getByTestId("checkout-rules");
  await expect(rules).toContainText(
    `Keys are kept for ${duration(document.policy.retentionSeconds)}`,
  );
  await expect(rules).toContainText(`lease of ${duration(document.policy.leaseSeconds)}`);
  await expect(page.getByTestId("openapi-link")).toHaveAttribute("href", "/api/openapi.json");

  // A rule's answer takes the reader to that answer of the checkout.
  await rules.getByRole("link", { name: /409/ }).click();
  await expect(page).toHaveURL(/#createOrder-409$/);
  await expect(page.locator("#createOrder-409")).toBeInViewport();
  await expect(page.locator("#createOrder-409")).toContainText("Retry-After");
});

for (const { width, height, name } of [
  { width: 1280, height: 900, name: "laptop" },
  { width: 390, height: 844, name: "phone" },
]) {
  test(`API reference fits a ${width} px screen without sideways scrolling`, async ({
    page,
  }, testInfo) => {
    await page.setViewportSize({ width, height });
    await page.goto("/docs/api");
    await expect(page.getByTestId("api-operation").first()).toBeVisible();
    const overflow = await page.evaluate(
      () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
    );
    expect(overflow).toBe(0);
    // The page is long: its top, the rules and the checkout's entry, each on its own.
    await page.screenshot({ path: testInfo.outputPath(`api-reference-top-${name}.png`) });
    await page
      .locator("#checkout-rules")
      .screenshot({ path: testInfo.outputPath(`api-reference-rules-${name}.png`) });
    await page
      .locator("#createOrder")
      .screenshot({ path: testInfo.outputPath(`api-reference-checkout-${name}.png`) });
  });
}
