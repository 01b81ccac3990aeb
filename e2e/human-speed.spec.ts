import { expect, test, type Page } from "@playwright/test";
import { accountIdOf, closeDatabase, ordersOf, paymentsOf } from "@/lib/testing/e2e/database";

/**
 * The shop at the speed people click: real mouse clicks on Pay, 50 to 300 ms
 * apart, as a double-click or an impatient second press sends them. A
 * payment here settles in about 100 ms, so the second click often arrives
 * after the page has changed; whatever it lands on, the shopper keeps the
 * confirmation and is charged once. Each test checks the database and the
 * history the page keeps, never a screen state that lasts milliseconds.
 */

test.afterAll(closeDatabase);
test.use({ viewport: { width: 1280, height: 800 } });

/** Keeps, from the first paint on, every appearance and disappearance of the confirmation, and what each click hit. */
async function keepHistory(page: Page) {
  await page.addInitScript(() => {
    const confirmation: string[] = [];
    const clicks: string[] = [];
    Object.assign(window, { __confirmation: confirmation, __clicks: clicks });
    new MutationObserver(() => {
      const shown = document.querySelector('[data-testid="order-confirmation"]') !== null;
      const last = confirmation.at(-1);
      if (shown && last !== "shown") confirmation.push("shown");
      if (!shown && last === "shown") confirmation.push("gone");
    }).observe(document, { subtree: true, childList: true });
    document.addEventListener(
      "click",
      (event) => {
        const target = (event.target as Element).closest("button, a");
        clicks.push(target?.textContent?.trim() ?? "(nothing)");
      },
      { capture: true },
    );
  });
}

async function history(page: Page): Promise<{ confirmation: string[]; clicks: string[] }> {
  return page.evaluate(() => {
    const kept = window as unknown as { __confirmation: string[]; __clicks: string[] };
    return { confirmation: [...kept.__confirmation], clicks: [...kept.__clicks] };
  });
}

/** Every payment POST the page sends, with the moments it left and was answered. */
function recordPayments(page: Page) {
  const sent: {
    key: string | null;
    sentAt: number;
    answeredAt: number | null;
    status: number | null;
    /** Answered from the key's stored response (Idempotent-Replayed: true). */
    replayed: boolean;
  }[] = [];
  page.on("request", (request) => {
    if (request.method() === "POST" && new URL(request.url()).pathname === "/api/orders") {
      const entry = {
        key: request.headers()["idempotency-key"] ?? null,
        sentAt: Date.now(),
        answeredAt: null as number | null,
        status: null as number | null,
        replayed: false,
      };
      sent.push(entry);
      void request.response().then((response) => {
        entry.answeredAt = Date.now();
        entry.status = response?.status() ?? null;
        entry.replayed = response?.headers()["idempotent-replayed"] === "true";
      });
    }
  });
  return sent;
}

/** Two real mouse clicks at the centre of Pay, `gapMs` apart (or one `dblclick`); returns where they landed. */
async function clickPayTwice(page: Page, gapMs: number | "dblclick") {
  const pay = page.getByTestId("pay-button");
  await expect(pay).toBeEnabled();
  const box = (await pay.boundingBox())!;
  const x = box.x + box.width / 2;
  const y = box.y + box.height / 2;
  if (gapMs === "dblclick") {
    await page.mouse.dblclick(x, y);
  } else {
    await page.mouse.click(x, y);
    await page.waitForTimeout(gapMs);
    await page.mouse.click(x, y);
  }
  return { x, y };
}

/** The control, if any, at a point of the page: what a click there would press. */
async function controlAt(page: Page, { x, y }: { x: number; y: number }) {
  return page.evaluate(
    ([px, py]) =>
      document
        .elementFromPoint(px!, py!)
        ?.closest("button, a, input, select, textarea")
        ?.textContent?.trim() ?? null,
    [x, y],
  );
}

async function fillCart(page: Page) {
  await page.goto("/");
  await page.getByRole("button", { name: "Add Stoneware Mug to cart" }).click();
  await expect(page.getByTestId("cart-total")).toHaveText("$18.00");
}

for (const gap of [50, 150, 300, "dblclick"] as const) {
  const how = gap === "dblclick" ? "a dblclick" : `two clicks ${gap} ms apart`;

  test(`normal checkout: ${how} on Pay make one order and one charge, and the confirmation stays`, async ({
    page,
    context,
  }) => {
    await keepHistory(page);
    const sent = recordPayments(page);
    await fillCart(page);

    const payCentre = await clickPayTwice(page, gap);
    await expect(page.getByTestId("order-confirmation")).toBeVisible();
    await expect(page.getByTestId("order-amount")).toHaveText("$18.00");
    // However late a second click comes, where Pay was there is nothing to press.
    expect(await controlAt(page, payCentre)).toBeNull();

    // Both clicks were delivered (the page saw them), and neither wiped the
    // confirmation: it appeared once and never went away.
    const kept = await history(page);
    expect(kept.clicks.length).toBeGreaterThanOrEqual(2);
    expect(kept.confirmation).toEqual(["shown"]);
    await expect(page.getByTestId("cart-summary").or(page.getByTestId("cart-line"))).toHaveCount(0);

    const accountId = await accountIdOf(context);
    expect(await ordersOf(accountId)).toHaveLength(1);
    expect(await paymentsOf(accountId)).toEqual([{ status: "succeeded", amount: 1800 }]);
    expect(new Set(sent.map((request) => request.key)).size).toBe(1);
  });
}

for (const gap of [50, 300, "dblclick"] as const) {
  const how = gap === "dblclick" ? "a dblclick" : `two clicks ${gap} ms apart`;

  test(`double-click demo: ${how} send two overlapping requests under one key, and the timeline shows how the second was answered`, async ({
    page,
    context,
  }) => {
    await keepHistory(page);
    const sent = recordPayments(page);
    await page.goto("/");
    await page.getByRole("radio", { name: "Double-click", exact: true }).check();
    await expect(page.getByTestId("demo-status")).toContainText("Armed: Double-click.");
    await page.getByRole("button", { name: "Add Stoneware Mug to cart" }).click();

    await clickPayTwice(page, gap);
    await expect(page.getByTestId("order-confirmation")).toBeVisible({ timeout: 30_000 });
    await expect(page.getByTestId("demo-status")).toContainText("Double-click finished");

    // The two were in flight together: each left before the other was answered.
    expect(sent.length).toBeGreaterThanOrEqual(2);
    const [first, second] = sent;
    expect(second!.sentAt).toBeLessThan(first!.answeredAt!);
    expect(first!.sentAt).toBeLessThan(second!.answeredAt!);
    expect(new Set(sent.map((request) => request.key)).size).toBe(1);
    // Whichever reached the server first claimed the key and made the one
    // order; the other was answered from the key. A double click's two
    // requests can arrive in either order (on a busy machine the second
    // often wins), and the other one finds the key held: it asks to wait
    // for it (Prefer: wait) and gets the replay, or a 409 should that wait
    // run out. Either is the promise.
    const claimed = [first!, second!].findIndex((r) => r.status === 201 && !r.replayed);
    expect(claimed).toBeGreaterThanOrEqual(0);
    const other = sent[1 - claimed]!;
    expect([409, "201 replayed"]).toContain(
      other.status === 201 && other.replayed ? "201 replayed" : other.status,
    );

    // The timeline: every request under the one key, the other one's answer
    // as it came, and, after a 409, a later attempt that replayed.
    const rows = page.getByTestId("attempt");
    await expect(rows).toHaveCount(sent.length);
    if (other.status === 409) {
      await expect(rows.nth(1 - claimed)).toHaveAttribute("data-status", "409");
      await expect(rows.last()).toHaveAttribute("data-replayed", "true");
    } else {
      await expect(rows.nth(1 - claimed)).toHaveAttribute("data-replayed", "true");
    }
    await expect(page.getByTestId("attempts-summary")).toHaveText(
      `${sent.length} attempts, 1 key, 1 order`,
    );
    expect((await history(page)).confirmation).toEqual(["shown"]);

    const accountId = await accountIdOf(context);
    expect(await ordersOf(accountId)).toHaveLength(1);
    expect(await paymentsOf(accountId)).toEqual([{ status: "succeeded", amount: 1800 }]);
  });
}

/** Where an element sits in the viewport, or null when it is not on the page. */
async function onScreen(page: Page, testId: string): Promise<boolean> {
  const box = await page.getByTestId(testId).last().boundingBox();
  if (!box) return false;
  const viewport = page.viewportSize()!;
  return (
    box.y >= 0 &&
    box.y + box.height <= viewport.height &&
    box.x >= 0 &&
    box.x + box.width <= viewport.width
  );
}

test("cause and effect on one screen: while a scenario runs, it, Pay, the attempts and its action are all in view, with no column to scroll", async ({
  page,
}) => {
  // Every change of the run's attempts is measured as it happens, and kept.
  await page.addInitScript(() => {
    const samples: {
      attempts: number;
      allInView: boolean;
      columnScrolls: boolean;
      overflow: number;
    }[] = [];
    Object.assign(window, { __samples: samples });
    const inView = (element: Element | null) => {
      if (!element) return false;
      const box = element.getBoundingClientRect();
      return box.top >= 0 && box.bottom <= window.innerHeight;
    };
    new MutationObserver(() => {
      const phase = document
        .querySelector('[data-testid="checkout-status"]')
        ?.getAttribute("data-phase");
      if (phase !== "paying" && phase !== "waiting") return;
      const attempts = document.querySelectorAll('[data-testid="attempt"]');
      const column = document.getElementById("cart")!;
      const action = document.querySelector('[data-testid="running-scenario"] button');
      samples.push({
        attempts: attempts.length,
        allInView:
          inView(document.querySelector('[data-testid="pay-button"]')) &&
          inView(document.querySelector('[data-testid="running-scenario"]')) &&
          inView(attempts[attempts.length - 1] ?? null) &&
          (action === null || inView(action)),
        columnScrolls: column.scrollHeight > column.clientHeight,
        overflow: column.scrollHeight - column.clientHeight,
      });
    }).observe(document, { subtree: true, childList: true, attributes: true });
  });

  await page.goto("/");
  await page.getByRole("radio", { name: "Slow network", exact: true }).check();
  // Held 12 s: the first attempt times out at 6 s, and the retry's 5 s wait
  // for it runs out too, so the run makes a third attempt.
  await page.getByLabel("Server holds each payment for").selectOption("12000");
  await expect(page.getByTestId("demo-status")).toContainText("Armed: Slow network.");
  for (const name of [
    "Stoneware Mug",
    "House Blend Beans",
    "Pour-Over Dripper",
    "Gooseneck Kettle",
  ])
    await page.getByRole("button", { name: `Add ${name} to cart` }).click();
  await page.getByTestId("pay-button").click();
  await expect(page.getByTestId("order-confirmation")).toBeVisible({ timeout: 40_000 });

  const samples = await page.evaluate(
    () =>
      (
        window as unknown as {
          __samples: { attempts: number; allInView: boolean; columnScrolls: boolean }[];
        }
      ).__samples,
  );
  // The run timed out, waited, met a 409 and retried: several attempts, each measured.
  expect(Math.max(...samples.map((sample) => sample.attempts))).toBeGreaterThanOrEqual(3);
  expect(samples.filter((sample) => !sample.allInView || sample.columnScrolls)).toEqual([]);
});

test("the reload scenario's action sits beside Pay and the attempts while the server holds the payment", async ({
  page,
}) => {
  await page.goto("/");
  await page.getByRole("radio", { name: "Reload mid-payment", exact: true }).check();
  await expect(page.getByTestId("demo-status")).toContainText("Armed: Reload mid-payment.");
  await page.getByRole("button", { name: "Add Paper Filters to cart" }).click();
  await page.getByTestId("pay-button").click();

  // The server holds this payment for 5 s: a state that lasts, not a flash.
  const reload = page.getByRole("button", { name: "Reload the page now" });
  await expect(reload).toBeVisible();
  for (const part of ["pay-button", "running-scenario", "attempt"])
    expect(await onScreen(page, part), part).toBe(true);
  expect(await onScreen(page, "running-scenario")).toBe(true);
  const reloadBox = (await reload.boundingBox())!;
  expect(reloadBox.y + reloadBox.height).toBeLessThanOrEqual(800);

  await reload.click();
  await expect(page.getByTestId("order-confirmation")).toBeVisible({ timeout: 40_000 });
});

test.describe("on a phone", () => {
  test.use({ viewport: { width: 390, height: 844 } });

  test("a cart bar with the count, the total and Pay stays on screen once the cart holds something, and pays once", async ({
    page,
    context,
  }) => {
    await page.goto("/");
    await expect(page.getByTestId("cart-bar")).toHaveCount(0);
    await page.getByRole("button", { name: "Add Stoneware Mug to cart" }).click();
    await page.getByRole("button", { name: "Add Paper Filters to cart" }).click();
    await expect(page.getByTestId("cart-bar-total")).toHaveText("$24.50");
    await expect(page.getByTestId("cart-bar-count")).toContainText("2 items");

    // Wherever the page is scrolled, the bar is on screen, and at the very
    // bottom it covers nothing of the page.
    for (const where of ["top", "middle", "bottom"] as const) {
      await page.evaluate((to) => {
        const height = document.documentElement.scrollHeight;
        const top = to === "top" ? 0 : to === "middle" ? height / 2 : height;
        window.scrollTo({ top, behavior: "instant" });
      }, where);
      expect(await onScreen(page, "cart-bar"), `at the ${where}`).toBe(true);
    }
    const footer = (await page.locator("footer").boundingBox())!;
    const bar = (await page.getByTestId("cart-bar").boundingBox())!;
    expect(footer.y + footer.height).toBeLessThanOrEqual(bar.y + 1);

    await page.getByTestId("cart-bar-pay").click();
    await expect(page.getByTestId("cart-bar")).toContainText("See your order");
    await expect(page.getByTestId("order-confirmation")).toBeAttached();
    const accountId = await accountIdOf(context);
    expect(await ordersOf(accountId)).toHaveLength(1);
    expect(await paymentsOf(accountId)).toEqual([{ status: "succeeded", amount: 2450 }]);
  });
});
