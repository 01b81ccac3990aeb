import { expect, type Page } from "@playwright/test";

/** Picks the lab's storm size as a person does: by clicking its pill (the radio inside is visually hidden). */
export async function chooseStormSize(page: Page, size: number) {
  await page.getByRole("group", { name: "Requests per storm" }).getByText(String(size), { exact: true }).click();
  await expect(page.getByRole("radio", { name: String(size), exact: true })).toBeChecked();
}
