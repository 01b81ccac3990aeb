import AxeBuilder from "@axe-core/playwright";
import { expect, type Page } from "@playwright/test";

/**
 * axe's check of a page against WCAG 2.2 AA, for the specs that look at a
 * page with content on it (accessibility.spec.ts goes through every page;
 * others check the states only they reach).
 */
const WCAG_22_AA = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"];

/** One line per offending node, so a failure says what to fix without opening the report. */
function describeViolations(results: Awaited<ReturnType<AxeBuilder["analyze"]>>): string {
  return results.violations
    .flatMap((violation) =>
      violation.nodes.map(
        (node) =>
          `${violation.id} (${violation.impact}): ${violation.help}\n  at ${node.target.join(" ")}\n  ${node.failureSummary?.replaceAll("\n", "\n  ")}`,
      ),
    )
    .join("\n");
}

export async function expectNoViolations(page: Page, what: string) {
  const results = await new AxeBuilder({ page }).withTags(WCAG_22_AA).analyze();
  expect
    .soft(
      results.violations.map((violation) => violation.id),
      `axe on ${what}:\n${describeViolations(results)}`,
    )
    .toEqual([]);
}
