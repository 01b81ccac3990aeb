import type { TestProject } from "vitest/node";
import { startAppServer } from "@/lib/testing/app-server";
import { spawnService } from "@/lib/process/spawn-service";

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
  const server = await startAppServer({
    env: {
      LAB_DYNAMODB_ENDPOINT: dynamodb.url,
      LAB_REDIS_URL: redis.url,
      // A configured DynamoDB gets its region and credentials from the AWS
      // SDK's usual chain, as at AWS; dynalite checks no signature.
      AWS_REGION: "local",
      AWS_ACCESS_KEY_ID: "local",
      AWS_SECRET_ACCESS_KEY: "local",
    },
  });
  project.provide("baseUrl", server.baseUrl);
  project.provide("databaseUrl", server.databaseUrl);
  project.provide("realPostgres", server.realPostgres);
  project.provide("paymentSimulatorUrl", server.paymentSimulator.url);
  project.provide("paymentSimulatorAdminKey", server.paymentSimulator.adminKey);
  project.provide("labDynamoDbUrl", dynamodb.url);
  project.provide("labRedisUrl", redis.url);
  if (!server.realPostgres) {
    console.warn(
      "[tests] DATABASE_URL is not set: running on embedded PGlite, which serialises all statements, so the concurrency tests cannot expose races here. CI runs them on PostgreSQL.",
    );
  }
  return async () => {
    await server.stop();
    await Promise.all([dynamodb.stop(), redis.stop()]);
  };
}

declare module "vitest" {
  export interface ProvidedContext {
    baseUrl: string;
    databaseUrl: string;
    realPostgres: boolean;
    paymentSimulatorUrl: string;
    /** The admin key the launcher made for that simulator (its admin API, /_simulator/*). */
    paymentSimulatorAdminKey: string;
    /** The lab's DynamoDB (dynalite) and Redis, which the shared app is pointed at. */
    labDynamoDbUrl: string;
    labRedisUrl: string;
  }
}
