import { createHash } from "node:crypto";
import { CreateTableCommand, DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DynamoDBDocumentClient, ScanCommand } from "@aws-sdk/lib-dynamodb";
import {
  IdempotencyAlreadyInProgressError,
  IdempotencyConfig,
  makeIdempotent,
} from "@aws-lambda-powertools/idempotency";
import { DynamoDBPersistenceLayer } from "@aws-lambda-powertools/idempotency/dynamodb";
import { afterAll, beforeAll, describe, expect, inject, it, vi } from "vitest";

/**
 * What Powertools' idempotency needs outside Lambda, shown on the library
 * itself (against the lab's dynalite): the in-progress expiry comes from
 * the Lambda context's remaining time. With a context, a record left
 * INPROGRESS by a crash blocks its key until then; without one, Powertools
 * only warns, writes no in-progress expiry, and the key stays blocked until
 * the whole record expires. lib/lab/powertools-checkout.ts passes a context
 * for that reason.
 */
const TABLE = "powertools_outside_lambda";
const client = new DynamoDBClient({
  endpoint: inject("labDynamoDbUrl"),
  region: "local",
  credentials: { accessKeyId: "local", secretAccessKey: "local" },
});
const doc = DynamoDBDocumentClient.from(client);

beforeAll(async () => {
  await client.send(
    new CreateTableCommand({
      TableName: TABLE,
      AttributeDefinitions: [{ AttributeName: "id", AttributeType: "S" }],
      KeySchema: [{ AttributeName: "id", KeyType: "HASH" }],
      BillingMode: "PAY_PER_REQUEST",
    }),
  );
});
afterAll(() => client.destroy());

/** A function that charges and then crashes: it never returns, so Powertools never records a result nor deletes its record. */
function crashingCheckout(charges: string[]) {
  return makeIdempotent(
    async (event: { key: string }) => {
      charges.push(event.key);
      await new Promise<never>(() => undefined);
    },
    {
      persistenceStore: new DynamoDBPersistenceLayer({ tableName: TABLE, awsSdkV3Client: client }),
      config: new IdempotencyConfig({ eventKeyJmesPath: "key", expiresAfterSeconds: 24 * 60 * 60 }),
    },
  ) as (event: { key: string }, context?: { getRemainingTimeInMillis(): number }) => Promise<void>;
}

describe("Powertools' idempotency outside Lambda", () => {
  it("with a context: the INPROGRESS record expires when the context's remaining time runs out", async () => {
    const charges: string[] = [];
    const checkout = crashingCheckout(charges);
    void checkout({ key: "with-context" }, { getRemainingTimeInMillis: () => 20_000 });
    await vi.waitFor(() => expect(charges).toEqual(["with-context"]));

    const record = (await scanFor("with-context"))!;
    expect(record.status).toBe("INPROGRESS");
    expect(Number(record.in_progress_expiration)).toBeGreaterThan(Date.now() + 15_000);
    expect(Number(record.in_progress_expiration)).toBeLessThanOrEqual(Date.now() + 20_000);
    await expect(
      checkout({ key: "with-context" }, { getRemainingTimeInMillis: () => 20_000 }),
    ).rejects.toBeInstanceOf(IdempotencyAlreadyInProgressError);
  });

  it("without one: it warns, writes no in-progress expiry, and the key stays blocked until the record expires, a day later", async () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => undefined);
    const charges: string[] = [];
    const checkout = crashingCheckout(charges);
    void checkout({ key: "no-context" });
    await vi.waitFor(() => expect(charges).toEqual(["no-context"]));

    expect(warn).toHaveBeenCalledWith(expect.stringContaining("registerLambdaContext"));
    warn.mockRestore();
    const record = (await scanFor("no-context"))!;
    expect(record.status).toBe("INPROGRESS");
    expect(record.in_progress_expiration).toBeUndefined();
    expect(Number(record.expiration)).toBeGreaterThan(Date.now() / 1000 + 23 * 60 * 60);
    await expect(checkout({ key: "no-context" })).rejects.toBeInstanceOf(
      IdempotencyAlreadyInProgressError,
    );
  });
});

/** The record this file's function wrote for `key`: Powertools names it `<prefix>#<base64 MD5 of the key's JSON>`. */
async function scanFor(key: string) {
  const { Items = [] } = await doc.send(new ScanCommand({ TableName: TABLE }));
  const hash = createHash("md5").update(JSON.stringify(key)).digest("base64");
  return Items.find((item) => String(item.id).endsWith(`#${hash}`));
}
