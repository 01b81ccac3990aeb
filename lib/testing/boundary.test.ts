import { ESLint } from "eslint";
import { describe, expect, it } from "vitest";

/**
 * Production code never imports test support (lib/testing). An ESLint rule
 * enforces it; this proves the rule is there and covers both import styles,
 * so deleting it from eslint.config.mjs fails a test, not only a review.
 */
async function restrictedImportsIn(filePath: string, source: string): Promise<string[]> {
  const [result] = await new ESLint().lintText(source, { filePath });
  return (result?.messages ?? [])
    .filter((message) => message.ruleId === "no-restricted-imports")
    .map((message) => message.message);
}

const importsTestSupport = [
  'import { keyRow } from "@/lib/testing/database";',
  'import { sendRaw } from "../testing/raw-http";',
  "export const used = [keyRow, sendRaw];",
  "",
].join("\n");

describe("lib/testing's import boundary", () => {
  it("refuses test support in production code, with the reason, in both import styles", async () => {
    const messages = await restrictedImportsIn("lib/api/example.ts", importsTestSupport);
    expect(messages).toHaveLength(2);
    expect(messages[0]).toContain("production code must not import it");
  });

  it("refuses it in the launcher scripts, pages and lib/lab too", async () => {
    const script =
      'import { startAppServer } from "../lib/testing/app-server.ts";\nexport const used = startAppServer;\n';
    expect(await restrictedImportsIn("scripts/example.mts", script)).toHaveLength(1);
    expect(await restrictedImportsIn("app/example/page.tsx", importsTestSupport)).toHaveLength(2);
    expect(await restrictedImportsIn("lib/lab/example.ts", importsTestSupport)).toHaveLength(2);
  });

  it("lets tests, lib/testing itself, e2e/ and the runners' configs import it", async () => {
    for (const filePath of [
      "lib/api/example.test.ts",
      "lib/lab/example.test.ts",
      "lib/testing/example.ts",
      "e2e/example.spec.ts",
      "playwright.config.ts",
    ]) {
      expect(await restrictedImportsIn(filePath, importsTestSupport), filePath).toEqual([]);
    }
  });

  it("lets bench/ start the app as the tests do and run the soak, and nothing more", async () => {
    const appServer =
      'import { startAppServer } from "../lib/testing/app-server.ts";\nexport const used = startAppServer;\n';
    expect(await restrictedImportsIn("bench/example.mts", appServer)).toEqual([]);
    const soak =
      'import { runSoak } from "../lib/testing/soak/run.ts";\nexport const used = runSoak;\n';
    expect(await restrictedImportsIn("bench/example.mts", soak)).toEqual([]);
    const client =
      'import { postOrder } from "../lib/testing/api-client.ts";\nexport const used = postOrder;\n';
    const messages = await restrictedImportsIn("bench/example.mts", client);
    expect(messages).toHaveLength(1);
    expect(messages[0]).toContain("bench/ may use lib/testing/app-server");
  });
});
