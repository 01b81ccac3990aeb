import { expect, type Page } from "@playwright/test";
import { LAB_STORM_METADATA } from "@/lib/lab/charge-tags";
import { PROVIDER_KEY_METADATA } from "@/lib/payments/stripe-provider";
import { keyRow, labStorm, ordersForCart, providerIntents } from "@/lib/testing/e2e/database";

/** Picks the lab's storm size as a person does: by clicking its pill (the radio inside is visually hidden). */
export async function chooseStormSize(page: Page, size: number) {
  await page
    .getByRole("group", { name: "Requests per storm" })
    .getByText(String(size), { exact: true })
    .click();
  await expect(page.getByRole("radio", { name: String(size), exact: true })).toBeChecked();
}

/** What the storm left, counted in our tables and in the simulator's ledger. */
export async function recorded(stormId: string) {
  const storm = await labStorm(stormId);
  if (!storm) throw new Error(`No storm ${stormId}`);
  let metadata: Record<string, string> = { [LAB_STORM_METADATA]: stormId };
  if (storm.strategy === "atomic_claim") {
    const key = await keyRow(storm.account_id, storm.idem_key!);
    metadata = { [PROVIDER_KEY_METADATA]: key!.provider_key };
  }
  const charges = await providerIntents({ metadata });
  return {
    orders: await ordersForCart(storm.account_id, storm.cart_id),
    charges: charges.succeeded,
    money: dollars(charges.amountCharged),
  };
}

export const dollars = (cents: number) =>
  new Intl.NumberFormat("en-US", { style: "currency", currency: "USD" }).format(cents / 100);
