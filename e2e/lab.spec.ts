import { expect, test, type Page } from "@playwright/test";
import { LAB_STRATEGIES, type LabStrategy } from "@/lib/lab/strategies";
import { accountIdOf, closeDatabase } from "@/lib/testing/e2e/database";
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
