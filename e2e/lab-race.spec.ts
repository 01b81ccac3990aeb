import { expect, test, type Page } from "@playwright/test";
import { LAB_STRATEGIES, LAB_STRATEGY_INFO } from "@/lib/lab/strategies";
import { closeDatabase, labStorm } from "@/lib/testing/e2e/database";
import { chooseStormSize, recorded } from "./lab-page";

/**
 * "Race all seven": one click storms every design and then crashes each
 * after its charge; the comparison at the top of the page must show, per
 * design, exactly what our tables and the simulator's ledger recorded for
 * that design's storm, and the verdicts the cards give. It takes as long as
 * the longest crash run: OncePay's lease (15 s in these tests).
 */
test.afterAll(closeDatabase);

const STORM = 10;

test("lab: racing all seven fills the comparison with what the server recorded, broken designs marked broken, on a laptop and on a phone", async ({
  page,
}, testInfo) => {
  test.setTimeout(180_000);
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.goto("/lab");
  // Before any run, every design says so plainly.
  for (const strategy of LAB_STRATEGIES)
    await expect(
      page.getByTestId(`compare-row-${strategy}`).getByText("Never run yet."),
    ).toBeVisible();

  await chooseStormSize(page, STORM);
  await page.getByTestId("lab-race-all").click();

  for (const strategy of LAB_STRATEGIES) {
    const row = page.getByTestId(`compare-row-${strategy}`);
    // A row takes a run's id only once the server's report of it is in.
    await expect(row).not.toHaveAttribute("data-crash-id", "", { timeout: 150_000 });
    const stormId = (await row.getAttribute("data-storm-id"))!;
    const crashId = (await row.getAttribute("data-crash-id"))!;

    // The runs shown are this design's: a storm of the chosen size, and a crash run.
    expect(await labStorm(stormId), strategy).toMatchObject({ strategy, size: STORM });
    expect(await labStorm(crashId), strategy).toMatchObject({ strategy });

    const shown = {
      orders: Number(await row.getByTestId("compare-orders").textContent()),
      charges: Number(await row.getByTestId("compare-charges").textContent()),
      money: (await row.getByTestId("compare-money").textContent())!.trim(),
    };
    expect(shown, strategy).toEqual(await recorded(stormId));
    const crashRecorded = await recorded(crashId);
    await expect(row.getByTestId("compare-crash-counts")).toHaveText(
      `crash run: ${crashRecorded.orders} order${crashRecorded.orders === 1 ? "" : "s"}, ${crashRecorded.charges} charge${crashRecorded.charges === 1 ? "" : "s"}`,
    );

    const stormOutcome = await row.getAttribute("data-storm-outcome");
    const crashOutcome = await row.getAttribute("data-crash-outcome");
    const kind = LAB_STRATEGY_INFO[strategy].kind;
    if (strategy === "no_key") {
      expect(shown.charges).toBe(STORM);
      expect(stormOutcome).toBe("broke");
    } else if (kind === "broken") {
      // A browser storm overlaps at most six requests: a broken design may
      // get lucky in a storm of 10 (see lab.spec.ts), but is never held.
      expect(stormOutcome, strategy).toBe(shown.charges > 1 ? "broke" : "lucky");
    } else {
      expect(shown, strategy).toMatchObject({ orders: 1, charges: 1 });
      expect(stormOutcome, strategy).toBe("held");
    }
    // A crash after the charge breaks every design but the atomic claim.
    expect(crashOutcome, strategy).toBe(kind === "real" ? "held" : "broke");
    // Broken is said in words, not only in colour.
    await expect(row.getByTestId("compare-crash-verdict")).toHaveText(
      kind === "real" ? "Crash: held" : "Crash: broke",
    );
  }
  await expect(page.getByTestId("race-failed")).toHaveCount(0);
  await expect(page.getByTestId("race-skipped")).toHaveCount(0);

  // The page opens with the comparison: a reload lists the same runs from the server.
  const raced = await runIdsShown(page);
  await page.reload();
  for (const strategy of LAB_STRATEGIES)
    await expect(page.getByTestId(`compare-row-${strategy}`)).toHaveAttribute(
      "data-crash-id",
      raced.get(strategy)!.crashId,
    );
  expect(await runIdsShown(page)).toEqual(raced);

  const comparison = page.getByTestId("lab-comparison");
  await comparison.scrollIntoViewIfNeeded();
  await comparison.screenshot({ path: testInfo.outputPath("lab-race-laptop.png") });
  await page.screenshot({ path: testInfo.outputPath("lab-race-laptop-page.png") });
  await page.setViewportSize({ width: 390, height: 844 });
  await comparison.screenshot({ path: testInfo.outputPath("lab-race-phone.png") });
  await page.screenshot({ path: testInfo.outputPath("lab-race-phone-page.png") });
});

async function runIdsShown(page: Page) {
  const ids = new Map<string, { stormId: string; crashId: string }>();
  for (const strategy of LAB_STRATEGIES) {
    const row = page.getByTestId(`compare-row-${strategy}`);
    ids.set(strategy, {
      stormId: (await row.getAttribute("data-storm-id"))!,
      crashId: (await row.getAttribute("data-crash-id"))!,
    });
  }
  return ids;
}
