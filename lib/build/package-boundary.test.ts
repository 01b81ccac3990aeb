import { ESLint } from "eslint";
import { describe, expect, it } from "vitest";

/**
 * packages/idempotency is installed on its own, so it may import nothing of
 * the shop. Its own test resolves every import it makes; this proves the
 * ESLint rule that says so at the editor is there, so deleting it from
 * eslint.config.mjs fails a test, not only a review.
 */
async function restrictedImportsIn(filePath: string, source: string): Promise<string[]> {
  const [result] = await new ESLint().lintText(source, { filePath });
  return (result?.messages ?? [])
    .filter((message) => message.ruleId === "no-restricted-imports")
    .map((message) => message.message);
}

describe("packages/idempotency's import boundary", () => {
  it("refuses the shop, by its alias or by a path out of the package, with the reason", async () => {
    const source = [
      'import { log } from "@/lib/log";',
      'import { catalog } from "../../../lib/orders/catalog";',
      "export const used = [log, catalog];",
      "",
    ].join("\n");
    for (const file of [
      "packages/idempotency/src/example.ts",
      "packages/idempotency/test/example.test.ts",
    ]) {
      const messages = await restrictedImportsIn(file, source);
      expect(messages).toHaveLength(2);
      expect(messages[0]).toContain("imports nothing of the shop");
    }
  });

  it("allows the package's own modules and the packages it declares", async () => {
    const source = [
      'import { createEngine } from "./engine.js";',
      'import { openTestDatabase } from "../test/support/database.js";',
      'import type pg from "pg";',
      "export const used = [createEngine, openTestDatabase, {} as pg.Pool];",
      "",
    ].join("\n");
    expect(await restrictedImportsIn("packages/idempotency/src/example.ts", source)).toEqual([]);
  });

  it("keeps the lab away from the engine, though it may read a request with the package's reader", async () => {
    const engine =
      'import { createEngine } from "@oncepay/idempotency";\nexport const used = createEngine;\n';
    const reader =
      'import { readJsonBody } from "@oncepay/idempotency/request";\nexport const used = readJsonBody;\n';
    expect(await restrictedImportsIn("lib/lab/example.ts", engine)).toHaveLength(1);
    expect(await restrictedImportsIn("lib/lab/example.ts", reader)).toEqual([]);
  });
});
