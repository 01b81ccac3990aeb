import { expect, test } from "@playwright/test";
import { LAB_STRATEGIES, LAB_STRATEGY_INFO } from "@/lib/lab/strategies";
import { closeDatabase } from "@/lib/testing/e2e/database";
import { recorded } from "./lab-page";

/**
 * The crash scenario in a real browser, for every strategy at once: the
 * server crashes after the charge, the page retries with the same key at
 * once and on until each key's in-flight expiry has passed. The numbers the
 * page shows are checked against our tables and the simulator's ledger. It
 * takes as long as the longest expiry: OncePay's lease (30 s by default).
 */
test.afterAll(closeDatabase);

test("lab: a crash after the charge, for every strategy: only OncePay's books agree", async ({
  page,
}, testInfo) => {
  test.setTimeout(150_000);
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.goto("/lab");
  await page.getByTestId("crash-all").click();

  for (const strategy of LAB_STRATEGIES) {
    const row = page.getByTestId(`crash-row-${strategy}`);
    // A row takes its run's id once the retries are over and the server's report is in.
    await expect(row).not.toHaveAttribute("data-storm-id", "", { timeout: 120_000 });
    const retries = row.getByTestId("crash-retries");
    const shown = {
      first: await retries.getAttribute("data-first"),
      atOnce: await retries.getAttribute("data-at-once"),
      final: await retries.getAttribute("data-final"),
      inProgressMs: Number(await retries.getAttribute("data-in-progress-ms")),
      orders: Number(await row.getByTestId("crash-orders").textContent()),
      charges: Number((await row.getByTestId("crash-charges").textContent())!.match(/^\d+/)![0]),
      agree: await row.getByTestId("crash-books").getAttribute("data-agree"),
    };
    const stormId = (await row.getAttribute("data-storm-id"))!;
    const inDatabase = await recorded(stormId);
    expect({ orders: inDatabase.orders, charges: inDatabase.charges }, strategy).toEqual({
      orders: shown.orders,
      charges: shown.charges,
    });

    const kind = LAB_STRATEGY_INFO[strategy].kind;
    if (kind === "real") {
      // After the lease, a retry finishes the order, or the recovery worker (every 10 s here) got there first and the retry gets its replay.
      expect(["201", "201 replayed"]).toContain(shown.final);
      expect(shown, strategy).toMatchObject({
        first: "500",
        atOnce: "409",
        orders: 1,
        charges: 1,
        agree: "true",
      });
      expect(shown.inProgressMs).toBeGreaterThanOrEqual(28_000);
    } else if (kind === "copied") {
      expect(shown, strategy).toMatchObject({
        first: "network error",
        atOnce: "409",
        final: "201",
        orders: 1,
        charges: 2,
        agree: "false",
      });
      expect(shown.inProgressMs).toBeGreaterThanOrEqual(18_000);
    } else {
      expect(shown, strategy).toMatchObject({
        first: "network error",
        atOnce: "201",
        final: "201",
        orders: 1,
        charges: 2,
        agree: "false",
      });
    }
  }

  const section = page.getByRole("region", { name: "Crash after the charge" });
  await section.scrollIntoViewIfNeeded();
  await page.screenshot({ path: testInfo.outputPath("lab-crash-laptop.png"), fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.screenshot({ path: testInfo.outputPath("lab-crash-phone.png"), fullPage: true });
});
