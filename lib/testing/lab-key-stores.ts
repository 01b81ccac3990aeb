import { createHash } from "node:crypto";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DynamoDBDocumentClient, GetCommand } from "@aws-sdk/lib-dynamodb";
import { createClient } from "@redis/client";
import { inject } from "vitest";
import { LAB_KEYS_TABLE, LAB_POWERTOOLS_TABLE } from "@/lib/lab/key-stores/connections";
import { POWERTOOLS_KEY_PREFIX } from "@/lib/lab/powertools-checkout";

/**
 * What the lab's copied designs left in their key stores, read there (the
 * shared test app is pointed at the dynalite and redis-server that the
 * global setup starts): assertions only, as rows.ts is for our tables.
 */
let doc: DynamoDBDocumentClient | undefined;
let redis: ReturnType<typeof createClient> | undefined;

function dynamo(): DynamoDBDocumentClient {
  doc ??= DynamoDBDocumentClient.from(
    new DynamoDBClient({
      endpoint: inject("labDynamoDbUrl"),
      region: "local",
      credentials: { accessKeyId: "local", secretAccessKey: "local" },
    }),
  );
  return doc;
}

async function redisClient() {
  if (!redis) {
    redis = createClient({ url: inject("labRedisUrl") });
    await redis.connect();
  }
  return redis;
}

export async function closeLabKeyStores(): Promise<void> {
  doc?.destroy();
  doc = undefined;
  await redis?.quit();
  redis = undefined;
}

/** The hand-written DynamoDB design's item for one key. */
export async function dynamoKeyItem(
  accountId: string,
  key: string,
): Promise<Record<string, unknown> | undefined> {
  return (
    await dynamo().send(
      new GetCommand({
        TableName: LAB_KEYS_TABLE,
        Key: { pk: `IDEMP#${accountId}#${key}` },
        ConsistentRead: true,
      }),
    )
  ).Item;
}

/**
 * Powertools' record for one key. Its id is Powertools' own: the prefix,
 * then the base64 MD5 of the JSON of what eventKeyJmesPath selects
 * ([accountId, key]), as its BasePersistenceLayer computes it.
 */
export async function powertoolsRecord(
  accountId: string,
  key: string,
): Promise<Record<string, unknown> | undefined> {
  const id = `${POWERTOOLS_KEY_PREFIX}#${createHash("md5")
    .update(JSON.stringify([accountId, key]))
    .digest("base64")}`;
  return (
    await dynamo().send(
      new GetCommand({ TableName: LAB_POWERTOOLS_TABLE, Key: { id }, ConsistentRead: true }),
    )
  ).Item;
}

/** The Redis design's value for one key, and its time to live in seconds (-2: no such key). */
export async function redisKey(
  accountId: string,
  key: string,
): Promise<{ value: string | null; ttlSeconds: number }> {
  const client = await redisClient();
  const name = `idem:${accountId}:${key}`;
  return { value: await client.get(name), ttlSeconds: await client.ttl(name) };
}
