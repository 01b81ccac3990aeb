import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "@/lib/process/free-port";
import { cartBody, createAccount } from "@/lib/testing/api-client";
import { expectNoInternalText, loggedLine } from "@/lib/testing/internal-text";
import { startAppServer, type AppServer } from "@/lib/testing/app-server";
import { rowsAt } from "@/lib/testing/rows";

/**
 * A copied design whose key store is not there cannot run, and says so: a
 * 503 with a stable problem type and the request id, before anything is
 * charged. Where the store was looked for, what its client said and what to
 * set go to the log, under that request id, not to the client. This app is
 * pointed at ports where nothing listens.
 */
let server: AppServer;
let closed: number;

beforeAll(async () => {
  // Free a moment ago, so nothing listens on it.
  closed = await freePort();
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
  ])(
    "%s answers 503 with a stable type and the request id, charges nothing, and only the log says what is missing (%s) and what to set",
    async (path, store, setting) => {
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
      expect(Number(response.headers.get("retry-after"))).toBeGreaterThan(0);
      const requestId = response.headers.get("x-request-id");
      expect(requestId).toMatch(/^[0-9a-f-]{36}$/);
      const text = await response.text();
      const problem = JSON.parse(text) as { type: string; detail: string };
      expect(problem.type).toBe("/problems/dependency-unavailable");
      expect(problem.detail).toContain(store);
      expectNoInternalText(text, String(closed), setting);
      expect(await rowsAt(server.databaseUrl).rowCounts(account.id)).toEqual({
        orders: 0,
        payments: 0,
      });

      const logged = await loggedLine(
        server,
        (line) => line.event === "lab.key_store_unavailable" && line.requestId === requestId,
      );
      expect(logged, "the log line of this request").toBeDefined();
      expect(String(logged!.error)).toContain(String(closed));
      expect(String(logged!.error)).toContain(setting);
    },
  );
});
