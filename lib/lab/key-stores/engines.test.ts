import { CreateTableCommand, DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DynamoDBDocumentClient, GetCommand, PutCommand } from "@aws-sdk/lib-dynamodb";
import { createClient } from "@redis/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnService, type ServiceProcess } from "@/lib/process/spawn-service";

/**
 * What the copied designs rely on, checked on the engines the lab runs
 * them on, started as the lab starts them (their own processes): of many
 * concurrent conditional writes of one key exactly one wins. If dynalite or
 * redis-server did not honour that, the lab's numbers would say nothing
 * about the designs.
 */
let dynalite: ServiceProcess;
let redis: ServiceProcess;
let doc: DynamoDBDocumentClient;

beforeAll(async () => {
  [dynalite, redis] = await Promise.all([
    spawnService({
      name: "dynalite",
      script: "scripts/lab-dynamodb.mts",
      env: {},
      follows: process.pid,
    }),
    spawnService({ name: "redis", script: "scripts/lab-redis.mts", env: {}, follows: process.pid }),
  ]);
  const client = new DynamoDBClient({
    endpoint: dynalite.url,
    region: "local",
    credentials: { accessKeyId: "local", secretAccessKey: "local" },
  });
  await client.send(
    new CreateTableCommand({
      TableName: "engine_check",
      AttributeDefinitions: [{ AttributeName: "pk", AttributeType: "S" }],
      KeySchema: [{ AttributeName: "pk", KeyType: "HASH" }],
      BillingMode: "PAY_PER_REQUEST",
    }),
  );
  doc = DynamoDBDocumentClient.from(client);
});

afterAll(async () => {
  await Promise.all([dynalite?.stop(), redis?.stop()]);
});

const CONCURRENT = 50;

describe("dynalite, through the AWS SDK", () => {
  it("lets exactly one of 50 concurrent conditional puts of one key win (attribute_not_exists)", async () => {
    const results = await Promise.allSettled(
      Array.from({ length: CONCURRENT }, (_, writer) =>
        doc.send(
          new PutCommand({
            TableName: "engine_check",
            Item: { pk: "IDEMP#once", status: "IN_PROGRESS", writer },
            ConditionExpression: "attribute_not_exists(pk)",
          }),
        ),
      ),
    );
    const won = results.flatMap((result, writer) =>
      result.status === "fulfilled" ? [writer] : [],
    );
    const lost = results.flatMap((result) =>
      result.status === "rejected" ? [(result.reason as Error).name] : [],
    );
    expect(won).toHaveLength(1);
    expect(new Set(lost)).toEqual(new Set(["ConditionalCheckFailedException"]));
    const item = await doc.send(
      new GetCommand({ TableName: "engine_check", Key: { pk: "IDEMP#once" } }),
    );
    expect(item.Item).toMatchObject({ status: "IN_PROGRESS", writer: won[0] });
  });

  it("lets exactly one of 50 take over an item whose ttl has passed, and none take over a live one", async () => {
    const now = Math.floor(Date.now() / 1000);
    const put = (pk: string, writer: number) =>
      doc.send(
        new PutCommand({
          TableName: "engine_check",
          Item: { pk, writer, ttl: now + 60 },
          ConditionExpression: "attribute_not_exists(pk) OR #ttl < :now",
          ExpressionAttributeNames: { "#ttl": "ttl" },
          ExpressionAttributeValues: { ":now": now },
        }),
      );
    await doc.send(
      new PutCommand({ TableName: "engine_check", Item: { pk: "IDEMP#expired", ttl: now - 1 } }),
    );
    await doc.send(
      new PutCommand({ TableName: "engine_check", Item: { pk: "IDEMP#live", ttl: now + 60 } }),
    );
    const expired = await Promise.allSettled(
      Array.from({ length: CONCURRENT }, (_, writer) => put("IDEMP#expired", writer)),
    );
    const live = await Promise.allSettled(
      Array.from({ length: CONCURRENT }, (_, writer) => put("IDEMP#live", writer)),
    );
    expect(expired.filter((result) => result.status === "fulfilled")).toHaveLength(1);
    expect(live.filter((result) => result.status === "fulfilled")).toHaveLength(0);
  });
});

describe("redis-server, through node-redis", () => {
  it("lets exactly one of 50 concurrent SET NX of one key win, each on its own connection", async () => {
    const clients = await Promise.all(
      Array.from({ length: CONCURRENT }, () => createClient({ url: redis.url }).connect()),
    );
    try {
      const answers = await Promise.all(
        clients.map((client, writer) =>
          client.set("IDEMP#once", `IN_PROGRESS:${writer}`, {
            condition: "NX",
            expiration: { type: "EX", value: 60 },
          }),
        ),
      );
      expect(answers.filter((answer) => answer === "OK")).toHaveLength(1);
      expect(answers.filter((answer) => answer === null)).toHaveLength(CONCURRENT - 1);
      expect(await clients[0]!.get("IDEMP#once")).toBe(`IN_PROGRESS:${answers.indexOf("OK")}`);
    } finally {
      await Promise.all(clients.map((client) => client.quit()));
    }
  });
});
