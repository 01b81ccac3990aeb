import { ESLint } from "eslint";
import { describe, expect, it } from "vitest";

/**
 * The lab must share no code path with the idempotency layer (DESIGN.md).
 * An ESLint rule enforces it; this proves the rule is there and covers both
 * import styles, so deleting it from eslint.config.mjs fails a test, not
 * only a review.
 */
async function restrictedImportsIn(filePath: string, source: string): Promise<string[]> {
  const [result] = await new ESLint().lintText(source, { filePath });
  return (result?.messages ?? [])
    .filter((message) => message.ruleId === "no-restricted-imports")
    .map((message) => message.message);
}

describe("lib/lab's import boundary", () => {
  it("refuses any import from the idempotency layer, with the reason", async () => {
    const source = [
      'import { outcomeToResponse } from "@/lib/idempotency/outcomes";',
      'import type { StoredResponse } from "../idempotency/stored-response";',
      "export const used = [outcomeToResponse, {} as StoredResponse];",
      "",
    ].join("\n");
    const messages = await restrictedImportsIn("lib/lab/example.ts", source);
    expect(messages).toHaveLength(2);
    expect(messages[0]).toContain("must share no code path with the idempotency layer");
  });

  it("allows what the lab shares on purpose (pricing, order writing, the provider, lib/http) and the copied designs' own libraries", async () => {
    const source = [
      'import { parseCheckoutRequest } from "@/lib/orders/cart";',
      'import { recordPaidOrder } from "@/lib/orders/record";',
      'import { jsonResponse } from "@/lib/http/json";',
      'import { makeIdempotent } from "@aws-lambda-powertools/idempotency";',
      'import { DynamoDBPersistenceLayer } from "@aws-lambda-powertools/idempotency/dynamodb";',
      "export const used = [parseCheckoutRequest, recordPaidOrder, jsonResponse, makeIdempotent, DynamoDBPersistenceLayer];",
      "",
    ].join("\n");
    expect(await restrictedImportsIn("lib/lab/example.ts", source)).toEqual([]);
  });

  it("refuses the composition root too, which would reach the idempotency layer through the services it builds", async () => {
    const source =
      'import { getServices } from "@/lib/services";\nexport const used = getServices;\n';
    const messages = await restrictedImportsIn("lib/lab/example.ts", source);
    expect(messages).toHaveLength(1);
    expect(messages[0]).toContain("composition root");
    expect(await restrictedImportsIn("lib/orders/example.ts", source)).toHaveLength(1);
    expect(await restrictedImportsIn("lib/api/example.ts", source)).toEqual([]);
  });

  it("applies to lib/lab only: the real endpoint uses the idempotency layer", async () => {
    const source =
      'import { outcomeToResponse } from "@/lib/idempotency/outcomes";\nexport const used = outcomeToResponse;\n';
    expect(await restrictedImportsIn("lib/api/example.ts", source)).toEqual([]);
  });
});
