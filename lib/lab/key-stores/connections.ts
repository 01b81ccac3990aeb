import {
  CreateTableCommand,
  DynamoDBClient,
  ResourceInUseException,
  waitUntilTableExists,
} from "@aws-sdk/client-dynamodb";
import { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { createClient } from "@redis/client";
import { serverEnv } from "@/lib/env";
import { LabKeyStoreUnavailable } from "@/lib/lab/key-stores/unavailable";
import { errorFields, log } from "@/lib/log";
import { LAUNCHER_PID_ENV } from "@/lib/process/follow-launcher";
import { spawnService } from "@/lib/process/spawn-service";

/**
 * The key stores of the designs the lab copies, connected on first use: a
 * DynamoDB (LAB_DYNAMODB_ENDPOINT, or dynalite started here) through the
 * official AWS SDK only, and a Redis (LAB_REDIS_URL, or redis-server started
 * here) through node-redis. Started lazily so that a shop that never opens
 * the lab runs neither, and each as a process of its own, following the
 * launcher rather than this app: a crash of the app leaves their keys.
 */

/** The hand-written design's table: `pk` ("IDEMP#<account>#<key>"), as in the classic example. */
export const LAB_KEYS_TABLE = "oncepay_lab_idempotency_keys";
/** Powertools' table, in the shape its DynamoDB persistence layer expects (partition key `id`). */
export const LAB_POWERTOOLS_TABLE = "oncepay_lab_powertools";

// A few quick reconnects ride out a blip; past them the client gives up,
// the connection is dropped (see connectRedis) and the next use starts over.
const REDIS_RECONNECTS = 3;

function newRedisClient(url: string) {
  return createClient({
    url,
    socket: {
      connectTimeout: 2_000,
      reconnectStrategy: (retries) =>
        retries >= REDIS_RECONNECTS ? new Error(`no answer from ${url}`) : 200,
    },
  });
}
export type LabRedis = ReturnType<typeof newRedisClient>;

async function startOrExplain<T>(
  what: string,
  howToFix: string,
  connect: () => Promise<T>,
): Promise<T> {
  try {
    return await connect();
  } catch (error) {
    throw new LabKeyStoreUnavailable(
      what,
      `The lab's ${what} is not available (${error instanceof Error ? error.message : String(error)}). ${howToFix}`,
      { cause: error },
    );
  }
}

/** The SDK's client (what Powertools takes) and its document client over it (plain JS values, what the hand-written design uses). */
export interface LabDynamoDb {
  client: DynamoDBClient;
  doc: DynamoDBDocumentClient;
}

const connections = globalThis as typeof globalThis & {
  oncepayLabDynamoDb?: Promise<LabDynamoDb>;
  oncepayLabRedis?: Promise<LabRedis>;
};

export function labDynamoDb(): Promise<LabDynamoDb> {
  connections.oncepayLabDynamoDb ??= startOrExplain(
    "DynamoDB",
    "Set LAB_DYNAMODB_ENDPOINT to a DynamoDB, or let the lab start dynalite (npm ci installs it).",
    connectDynamoDb,
  ).catch((error: unknown) => {
    connections.oncepayLabDynamoDb = undefined;
    throw error;
  });
  return connections.oncepayLabDynamoDb;
}

export function labRedis(): Promise<LabRedis> {
  connections.oncepayLabRedis ??= startOrExplain(
    "Redis",
    "Set LAB_REDIS_URL to a Redis, or install redis-server (apt-get install redis-server) for the lab to start.",
    connectRedis,
  ).catch((error: unknown) => {
    connections.oncepayLabRedis = undefined;
    throw error;
  });
  return connections.oncepayLabRedis;
}

// The process these services must not outlive: the launcher that started
// this app when there is one, so that the app's own crash leaves them.
function launcherPid(): number {
  const pid = Number(process.env[LAUNCHER_PID_ENV]);
  return Number.isInteger(pid) && pid > 0 ? pid : process.pid;
}

async function connectDynamoDb(): Promise<LabDynamoDb> {
  const configured = serverEnv().LAB_DYNAMODB_ENDPOINT;
  let client: DynamoDBClient;
  if (configured) {
    client = new DynamoDBClient({ endpoint: configured });
  } else {
    const dynalite = await spawnService({
      name: "The lab's DynamoDB (dynalite)",
      script: "scripts/lab-dynamodb.mts",
      env: {},
      follows: launcherPid(),
    });
    void dynalite.exited.then(() => (connections.oncepayLabDynamoDb = undefined));
    // dynalite checks no signature: any credentials and region will do.
    client = new DynamoDBClient({
      endpoint: dynalite.url,
      region: "local",
      credentials: { accessKeyId: "local", secretAccessKey: "local" },
    });
  }
  await ensureTable(client, LAB_KEYS_TABLE, "pk");
  await ensureTable(client, LAB_POWERTOOLS_TABLE, "id");
  return {
    client,
    doc: DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } }),
  };
}

async function ensureTable(
  client: DynamoDBClient,
  name: string,
  partitionKey: string,
): Promise<void> {
  try {
    await client.send(
      new CreateTableCommand({
        TableName: name,
        AttributeDefinitions: [{ AttributeName: partitionKey, AttributeType: "S" }],
        KeySchema: [{ AttributeName: partitionKey, KeyType: "HASH" }],
        BillingMode: "PAY_PER_REQUEST",
      }),
    );
  } catch (error) {
    if (!(error instanceof ResourceInUseException)) throw error;
  }
  await waitUntilTableExists({ client, maxWaitTime: 60 }, { TableName: name });
}

async function connectRedis(): Promise<LabRedis> {
  let url = serverEnv().LAB_REDIS_URL;
  if (!url) {
    const redis = await spawnService({
      name: "The lab's Redis",
      script: "scripts/lab-redis.mts",
      env: {},
      follows: launcherPid(),
    });
    void redis.exited.then(() => (connections.oncepayLabRedis = undefined));
    url = redis.url;
  }
  const client = newRedisClient(url);
  // An unhandled 'error' event would end the process.
  client.on("error", (error: unknown) => log.warn("lab.redis_error", errorFields(error)));
  client.on("end", () => (connections.oncepayLabRedis = undefined));
  await client.connect();
  return client;
}
