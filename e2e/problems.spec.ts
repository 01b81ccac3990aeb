import { expect, test } from "@playwright/test";
import { expectNoViolations } from "./axe";

/**
 * A problem's `type` is a page a person can open: the checkout's own 422,
 * sent by this browser's session, names one; following it shows what
 * happened and what to do, and the index lists every problem by what to do.
 */

for (const { width, height, name } of [
  { width: 1280, height: 800, name: "laptop" },
  { width: 390, height: 844, name: "phone" },
]) {
  test(`the type of a 422 the checkout answers opens a page that explains it, at ${width} px`, async ({
    page,
  }, testInfo) => {
    await page.setViewportSize({ width, height });
    await page.goto("/problems");
    // A key reused for another cart, sent from the page, as the shop's own session.
    const type = await page.evaluate(async () => {
      const key = crypto.randomUUID();
      const send = (quantity: number) =>
        fetch("/api/orders", {
          method: "POST",
          headers: { "Content-Type": "application/json", "Idempotency-Key": key },
          body: JSON.stringify({
            cartId: `cart-${key}`,
            items: [{ sku: "mug-ceramic-350", quantity }],
          }),
        });
      await send(1);
      const reused = await send(2);
      return { status: reused.status, link: reused.headers.get("link"), ...(await reused.json()) };
    });
    expect(type).toMatchObject({ status: 422, type: "/problems/idempotency-key-reused" });
    expect(type.link).toBe(
      '</problems/idempotency-key-reused>; rel="describedby"; type="text/html"',
    );

    await page.goto(type.type);
    await expect(page).toHaveTitle(
      "Idempotency key reused with a different request · OncePay Coffee Supply",
    );
    await expect(page.getByTestId("problem-title")).toHaveText(type.title);
    await expect(page.getByTestId("problem-action")).toHaveText("Use a new key");
    await expect(page.getByTestId("problem-todo")).toContainText("A new request needs a new key");
    await expectNoViolations(page, `the problem page at ${width} px`);
    await page.screenshot({ path: testInfo.outputPath(`problem-${name}.png`), fullPage: true });

    await page.getByRole("link", { name: "← Every problem" }).click();
    await expect(page.getByRole("heading", { level: 1 })).toHaveText("Problems the API answers");
    for (const action of ["retry", "new-key", "fix"])
      await expect(page.getByTestId(`problems-${action}`).getByRole("listitem")).not.toHaveCount(0);
    await expectNoViolations(page, `the problem index at ${width} px`);
    await page.screenshot({ path: testInfo.outputPath(`problems-${name}.png`), fullPage: true });
  });
}
