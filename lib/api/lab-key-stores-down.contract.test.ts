import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "@/lib/process/free-port";
import { cartBody, createAccount } from "@/lib/testing/api-client";
import { startAppServer, type AppServer } from "@/lib/testing/app-server";
import { rowsAt } from "@/lib/testing/rows";

/**
 * A copied design whose key store is not there cannot run, and says so: a
 * 503 that names what is missing and how to provide it, before anything is
 * charged. This app is pointed at ports where nothing listens.
 */
let server: AppServer;

beforeAll(async () => {
  // Free a moment ago, so nothing listens on it.
  const closed = await freePort();
  server = await startAppServer({
    env: {
      LAB_DYNAMODB_ENDPOINT: `http://127.0.0.1:${closed}`,
      LAB_REDIS_URL: `redis://127.0.0.1:${closed}`,
      AWS_REGION: "local",
      AWS_ACCESS_KEY_ID: "local",
      AWS_SECRET_ACCESS_KEY: "local",
    },
  });
});

afterAll(async () => {
  await server?.stop();
});

describe("the lab's copied designs without their key store", () => {
  it.each([
    ["/api/lab/dynamodb-orders", "DynamoDB", "LAB_DYNAMODB_ENDPOINT"],
    ["/api/lab/redis-orders", "Redis", "LAB_REDIS_URL"],
    ["/api/lab/powertools-orders", "DynamoDB", "LAB_DYNAMODB_ENDPOINT"],
  ])("%s answers 503 naming the missing %s, and charges nothing", async (path, store, setting) => {
    const account = await createAccount(server.baseUrl);
    const response = await fetch(`${server.baseUrl}${path}`, {
      method: "POST",
      headers: {
        Authorization: `Bearer ${account.token}`,
        "Content-Type": "application/json",
        "Idempotency-Key": crypto.randomUUID(),
      },
      body: JSON.stringify(cartBody()),
    });

    expect(response.status).toBe(503);
    expect(response.headers.get("content-type")).toBe("application/problem+json");
    const problem = (await response.json()) as { type: string; detail: string };
    expect(problem.type).toBe("urn:oncepay:problem:dependency-unavailable");
    expect(problem.detail).toContain(`The lab's ${store} is not available`);
    expect(problem.detail).toContain(setting);
    expect(await rowsAt(server.databaseUrl).rowCounts(account.id)).toEqual({
      orders: 0,
      payments: 0,
    });
  });
});
