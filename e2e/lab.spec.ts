import { expect, test, type Page } from "@playwright/test";
import { LAB_STRATEGIES, type LabStrategy } from "@/lib/lab/strategies";
import { accountIdOf, closeDatabase, labStorm } from "@/lib/testing/e2e/database";
import { chooseStormSize, dollars, recorded } from "./lab-page";

/**
 * The strategy lab in a real browser: a storm per strategy, fired by the
 * page with fetch, and the numbers the page shows checked against our
 * tables and the payment simulator's ledger. Every test has its own browser
 * context, so its own account and its own storms.
 */
test.afterAll(closeDatabase);

const STORM = 10;
const MUG_CENTS = 1800;

interface ShownStorm {
  stormId: string;
  sent: number;
  statuses: Record<string, number>;
  orders: number;
  charges: number;
  money: string;
  outcome: string | null;
}

async function fireStorm(page: Page, strategy: LabStrategy, size = STORM): Promise<ShownStorm> {
  await chooseStormSize(page, size);
  const row = page.getByTestId(`lab-row-${strategy}`);
  const before = (await row.getAttribute("data-storm-id")) ?? "";
  await row.getByTestId(`lab-run-${strategy}`).click();
  // The row takes the new storm's id only once the server's report is in.
  await expect(row).not.toHaveAttribute("data-storm-id", before, { timeout: 30_000 });
  const statuses = await row
    .getByTestId("lab-statuses")
    .locator("[data-status]")
    .evaluateAll((chips) =>
      Object.fromEntries(
        chips.map((chip) => [
          chip.getAttribute("data-status")!,
          Number(chip.getAttribute("data-count")),
        ]),
      ),
    );
  return {
    stormId: (await row.getAttribute("data-storm-id"))!,
    sent: Number(await row.getByTestId("lab-sent").textContent()),
    statuses,
    orders: Number(await row.getByTestId("lab-orders").textContent()),
    charges: Number(await row.getByTestId("lab-charges").textContent()),
    money: (await row.getByTestId("lab-money").textContent())!.trim(),
    outcome: await row.getByTestId("lab-verdict").getAttribute("data-outcome"),
  };
}

const total = (statuses: Record<string, number>) =>
  Object.values(statuses).reduce((sum, count) => sum + count, 0);

/**
 * A browser storm overlaps at most six requests (Chromium's connections per
 * origin), and whether two of them pass a broken strategy's check before the
 * first one commits is a race: usually they do, sometimes not. What the page
 * must never do is call a broken strategy safe: with more than one charge it
 * says "broke", with one "lucky". That the strategies do break on
 * PostgreSQL is proven with requests that really overlap, from Node, in
 * lib/api/lab.contract.test.ts.
 */
function expectBrokeOrLucky(shown: { charges: number; outcome: string | null }) {
  expect(shown.outcome).toBe(shown.charges > 1 ? "broke" : "lucky");
}

test.beforeEach(async ({ page }) => {
  await page.goto("/lab");
});

test("lab: no key makes an order and a charge for every request", async ({ page }) => {
  const shown = await fireStorm(page, "no_key");
  expect(shown).toMatchObject({
    sent: STORM,
    statuses: { "201": STORM },
    orders: STORM,
    charges: STORM,
    money: dollars(STORM * MUG_CENTS),
    outcome: "broke",
  });
  expect(await recorded(shown.stormId)).toEqual({
    orders: STORM,
    charges: STORM,
    money: shown.money,
  });
});

test("lab: check-then-insert writes an order for every charge in a storm of 10, and the page calls more than one charge broke, never safe", async ({
  page,
}) => {
  const shown = await fireStorm(page, "check_then_insert");
  expect(await recorded(shown.stormId)).toEqual({
    orders: shown.orders,
    charges: shown.charges,
    money: shown.money,
  });
  expect(total(shown.statuses)).toBe(STORM);
  expect(shown.orders).toBe(shown.charges);
  expectBrokeOrLucky(shown);
});

test("lab: claim after the charge writes one order, and the page calls more than one charge broke, never safe", async ({
  page,
}) => {
  const shown = await fireStorm(page, "claim_after_charge");
  expect(await recorded(shown.stormId)).toEqual({
    orders: 1,
    charges: shown.charges,
    money: shown.money,
  });
  expect(shown.orders).toBe(1);
  expect(total(shown.statuses)).toBe(STORM);
  expectBrokeOrLucky(shown);
});

test("lab: the real checkout makes exactly one order and one charge; the rest are 409 or replays", async ({
  page,
}) => {
  const shown = await fireStorm(page, "atomic_claim");
  expect(shown).toMatchObject({
    sent: STORM,
    orders: 1,
    charges: 1,
    money: dollars(MUG_CENTS),
    outcome: "held",
  });
  expect(shown.statuses["201"]).toBe(1);
  expect(
    Object.keys(shown.statuses).every((status) => ["201", "409", "201 replayed"].includes(status)),
  ).toBe(true);
  expect(total(shown.statuses)).toBe(STORM);
  expect(await recorded(shown.stormId)).toEqual({ orders: 1, charges: 1, money: shown.money });
});

for (const strategy of ["dynamodb_key_store", "redis_key_store", "powertools"] as const) {
  test(`lab: ${strategy} (a copied design) makes one order and one charge in a storm of 10`, async ({
    page,
  }) => {
    const shown = await fireStorm(page, strategy);
    expect(shown).toMatchObject({
      sent: STORM,
      orders: 1,
      charges: 1,
      money: dollars(MUG_CENTS),
      outcome: "held",
    });
    expect(total(shown.statuses)).toBe(STORM);
    expect(await recorded(shown.stormId)).toEqual({ orders: 1, charges: 1, money: shown.money });
  });
}

test("lab: after a storm of every strategy the page reads at a glance, on a laptop and on a phone", async ({
  page,
  context,
}, testInfo) => {
  await page.setViewportSize({ width: 1280, height: 900 });
  const shown = new Map<LabStrategy, ShownStorm>();
  for (const strategy of LAB_STRATEGIES) shown.set(strategy, await fireStorm(page, strategy));

  // The history table holds the four storms, newest first, with the server's numbers.
  const history = page.getByTestId("storm-history").locator("tbody tr");
  await expect(history).toHaveCount(LAB_STRATEGIES.length);
  expect(
    await history.evaluateAll((rows) => rows.map((row) => row.getAttribute("data-storm-id"))),
  ).toEqual([...LAB_STRATEGIES].reverse().map((strategy) => shown.get(strategy)!.stormId));
  // A reload keeps every row: the storms come from the server, the statuses from this tab's storage.
  await page.reload();
  for (const strategy of LAB_STRATEGIES) {
    const row = page.getByTestId(`lab-row-${strategy}`);
    await expect(row).toHaveAttribute("data-storm-id", shown.get(strategy)!.stormId);
    await expect(row.getByTestId("lab-orders")).toHaveText(String(shown.get(strategy)!.orders));
  }
  expect(await accountIdOf(context)).toMatch(/^[0-9a-f-]{36}$/);

  await page.screenshot({ path: testInfo.outputPath("lab-laptop.png"), fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.screenshot({ path: testInfo.outputPath("lab-phone.png"), fullPage: true });
});

/**
 * Records `count` runs the cheap way, started and never fired, through the
 * API with this page's session (Playwright's request context shares the
 * browser's cookies; a session write names its origin as the page's fetch does).
 */
async function recordUnfiredStorms(page: Page, strategy: LabStrategy, count: number) {
  const statuses: number[] = [];
  for (let run = 0; run < count; run++) {
    const response = await page.request.post("/api/lab/storms", {
      data: { strategy, size: 2 },
      headers: { "Sec-Fetch-Site": "same-origin" },
    });
    statuses.push(response.status());
  }
  expect(statuses).toEqual(Array(count).fill(201));
}

/** Where each of these cells sits across the page, in CSS pixels. */
async function horizontalExtents(page: Page, testIds: string[]) {
  return page.evaluate(
    (ids) =>
      ids.flatMap((id) =>
        [...document.querySelectorAll(`[data-testid="${id}"]`)].map((cell) => {
          const box = cell.getBoundingClientRect();
          return { id, left: Math.round(box.left), right: Math.round(box.right) };
        }),
      ),
    testIds,
  );
}

test("lab: the comparison keeps a design's storm and crash run after 21 later runs, and at 390 px every table shows orders, charges and money without scrolling sideways", async ({
  page,
}, testInfo) => {
  test.setTimeout(90_000);
  await page.setViewportSize({ width: 1280, height: 800 });
  const early = await fireStorm(page, "atomic_claim", 2);
  const crashRow = page.getByTestId("crash-row-no_key");
  await crashRow.getByTestId("crash-run-no_key").click();
  await expect(crashRow).not.toHaveAttribute("data-storm-id", "", { timeout: 30_000 });
  const earlyCrashId = (await crashRow.getAttribute("data-storm-id"))!;
  expect(await labStorm(earlyCrashId)).toMatchObject({ strategy: "no_key" });

  await recordUnfiredStorms(page, "check_then_insert", 21);
  await page.reload();
  // The latest 20 no longer hold them: the history table lists only the later runs.
  const history = page.getByTestId("storm-history").locator("tbody tr");
  await expect(history).toHaveCount(20);
  const listed = await history.evaluateAll((rows) =>
    rows.map((row) => row.getAttribute("data-storm-id")),
  );
  expect(listed).not.toContain(early.stormId);
  expect(listed).not.toContain(earlyCrashId);

  // The comparison and the cards still show them, with the server's numbers.
  const atomic = page.getByTestId("compare-row-atomic_claim");
  await expect(atomic).toHaveAttribute("data-storm-id", early.stormId);
  await expect(atomic.getByTestId("compare-storm-verdict")).toHaveText("Storm: held");
  expect({
    orders: Number(await atomic.getByTestId("compare-orders").textContent()),
    charges: Number(await atomic.getByTestId("compare-charges").textContent()),
    money: (await atomic.getByTestId("compare-money").textContent())!.trim(),
  }).toEqual(await recorded(early.stormId));
  await expect(page.getByTestId("lab-row-atomic_claim")).toHaveAttribute(
    "data-storm-id",
    early.stormId,
  );
  const noKey = page.getByTestId("compare-row-no_key");
  await expect(noKey).toHaveAttribute("data-crash-id", earlyCrashId);
  await expect(noKey.getByTestId("compare-crash-verdict")).toHaveText("Crash: broke");
  await expect(page.getByTestId("crash-row-no_key")).toHaveAttribute("data-storm-id", earlyCrashId);

  // A storm that takes money, so the money columns hold more than $0.00.
  await fireStorm(page, "no_key", 50);
  await page.screenshot({ path: testInfo.outputPath("lab-remembers-laptop.png"), fullPage: true });

  await page.setViewportSize({ width: 390, height: 844 });
  const cells = [
    "history-orders",
    "history-charges",
    "history-money",
    "compare-orders",
    "compare-charges",
    "compare-money",
    "lab-orders",
    "lab-charges",
    "lab-money",
    "crash-orders",
    "crash-charges",
  ];
  const extents = await horizontalExtents(page, cells);
  // Every kind of cell is on the page (21 history rows: the 20 listed and the storm since).
  for (const id of cells)
    expect(
      extents.some((cell) => cell.id === id),
      id,
    ).toBe(true);
  expect(extents.filter((cell) => cell.id === "history-money")).toHaveLength(21);
  expect(extents.filter((cell) => cell.left < 0 || cell.right > 390)).toEqual([]);
  // Nothing scrolls sideways: not the page, not the history table inside its frame.
  const widths = await page.evaluate(() => {
    const table = document.querySelector('[data-testid="storm-history"]')!;
    return {
      page: document.documentElement.scrollWidth,
      table: Math.ceil(table.getBoundingClientRect().width),
      frame: table.parentElement!.clientWidth,
      frameScroll: table.parentElement!.scrollWidth,
    };
  });
  expect(widths.page).toBeLessThanOrEqual(390);
  expect(widths.table).toBeLessThanOrEqual(widths.frame);
  expect(widths.frameScroll).toBeLessThanOrEqual(widths.frame);
  await page.screenshot({ path: testInfo.outputPath("lab-remembers-phone.png"), fullPage: true });
});
