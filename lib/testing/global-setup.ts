import type { TestProject } from "vitest/node";
import { startAppServer } from "@/lib/testing/app-server";
import { spawnService } from "@/lib/process/spawn-service";
import { labKeyStoreEnv } from "@/lib/testing/lab-key-store-env";

/**
 * One built app for the whole Vitest run; tests reach it through inject().
 * The strategy lab's key stores (dynalite, redis-server) are started here
 * and handed to the app as configured endpoints, as a deployment would
 * point it at DynamoDB and Redis, so that tests can read the items and keys
 * the copied designs leave behind. (The e2e server starts them itself, on
 * first use, the way `npm start` does.)
 */
export default async function setup(project: TestProject) {
  const [dynamodb, redis] = await Promise.all([
    spawnService({
      name: "The lab's DynamoDB (dynalite)",
      script: "scripts/lab-dynamodb.mts",
      env: {},
      follows: process.pid,
    }),
    spawnService({
      name: "The lab's Redis",
      script: "scripts/lab-redis.mts",
      env: {},
      follows: process.pid,
    }),
  ]);
  const stopStores = () => Promise.all([dynamodb.stop(), redis.stop()]);
  project.provide("labDynamoDbUrl", dynamodb.url);
  project.provide("labRedisUrl", redis.url);
  // Only the shared lane uses the shared app: a run of the other lanes
  // (scripts/vitest-lanes.mts starts a process per lane) starts none.
  if (!project.vitest.projects.some((running) => running.name === "shared")) {
    project.provide("realPostgres", Boolean(process.env.DATABASE_URL));
    if (process.env.DATABASE_URL) project.provide("databaseUrl", process.env.DATABASE_URL);
    return stopStores;
  }
  const server = await startAppServer({
    env: labKeyStoreEnv({ dynamodbUrl: dynamodb.url, redisUrl: redis.url }),
  });
  project.provide("baseUrl", server.baseUrl);
  project.provide("databaseUrl", server.databaseUrl);
  project.provide("realPostgres", server.realPostgres);
  project.provide("paymentSimulatorUrl", server.paymentSimulator.url);
  project.provide("paymentSimulatorAdminKey", server.paymentSimulator.adminKey);
  project.provide("stripeWebhookSecret", server.webhookSecret);
  if (!server.realPostgres) {
    console.warn(
      "[tests] DATABASE_URL is not set: running on embedded PGlite, which serialises all statements, so the concurrency tests cannot expose races here. CI runs them on PostgreSQL.",
    );
  }
  return async () => {
    await server.stop();
    await stopStores();
  };
}

declare module "vitest" {
  export interface ProvidedContext {
    /** The shared app, for the shared lane (vitest.config.mts); the other lanes have none. */
    baseUrl: string;
    databaseUrl: string;
    realPostgres: boolean;
    paymentSimulatorUrl: string;
    /** The admin key the launcher made for that simulator (its admin API, /_simulator/*). */
    paymentSimulatorAdminKey: string;
    /** What the shared app checks webhook signatures with, so tests can sign events of their own. */
    stripeWebhookSecret: string;
    /** The lab's DynamoDB (dynalite) and Redis, which the shared app is pointed at. */
    labDynamoDbUrl: string;
    labRedisUrl: string;
  }
}
