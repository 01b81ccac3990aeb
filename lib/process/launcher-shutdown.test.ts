import { randomUUID } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { cartBody, createAccount, postOrder } from "@/lib/testing/api-client";
import { setDemoSettings } from "@/lib/testing/api-client-demo";
import { startAppServer, type AppServer } from "@/lib/testing/app-server";
import { processesInGroup, stillRunning, type RunningProcess } from "@/lib/testing/processes";

/**
 * However the launcher ends, every process it started ends within 10 s of
 * it: Next.js, the payment simulator, the lab's key stores (which Next.js
 * starts on first use) and the redis-server under one of them. The embedded
 * database runs inside the launcher itself. For SIGTERM and SIGINT a
 * checkout is held in flight for 20 s, longer than the launcher lets
 * Next.js drain its requests.
 */
const WITHIN_MS = 10_000;

let server: AppServer | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
});

async function postLabOrder(path: string, token: string): Promise<number> {
  const response = await fetch(`${server!.baseUrl}${path}`, {
    method: "POST",
    headers: {
      Authorization: `Bearer ${token}`,
      "Content-Type": "application/json",
      "Idempotency-Key": randomUUID(),
    },
    body: JSON.stringify(cartBody()),
  });
  await response.body?.cancel();
  return response.status;
}

/** One line per process, for a failure message that says who was left. */
const described = (processes: readonly RunningProcess[]) =>
  processes.map((process) => `${process.pid} ${process.commandLine}`);

describe.each(["SIGTERM", "SIGINT", "SIGKILL"] as const)("a launcher ended by %s", (signal) => {
  it("takes every process it started with it within 10 s", async () => {
    server = await startAppServer();
    const account = await createAccount(server.baseUrl);
    // The lab's copied designs start their key stores on first use.
    expect(await postLabOrder("/api/lab/redis-orders", account.token)).toBe(201);
    expect(await postLabOrder("/api/lab/dynamodb-orders", account.token)).toBe(201);
    let held: Promise<unknown> = Promise.resolve();
    if (signal !== "SIGKILL") {
      expect(
        (
          await setDemoSettings(
            account.token,
            { networkDelayMs: 20_000, loseResponse: false },
            server.baseUrl,
          )
        ).status,
      ).toBe(200);
      held = postOrder({ baseUrl: server.baseUrl, token: account.token, key: randomUUID() }).catch(
        () => undefined,
      );
    }

    // The launcher leads its own process group; all it started are in it.
    const started = processesInGroup(server.processGroup);
    const others = started
      .filter((process) => process.pid !== server!.processGroup)
      .map((process) => process.commandLine);
    for (const expected of [
      /^next-server/,
      /payment-simulator\.mts/,
      /lab-redis\.mts/,
      /^redis-server/,
      /lab-dynamodb\.mts/,
    ]) {
      expect(others, `no process matching ${expected} in the group`).toContainEqual(
        expect.stringMatching(expected),
      );
    }

    process.kill(server.processGroup, signal);
    const signalledAt = performance.now();
    await expect
      .poll(() => described(stillRunning(started)), { timeout: WITHIN_MS + 2_000, interval: 100 })
      .toEqual([]);
    const endedAfterMs = performance.now() - signalledAt;
    console.info(
      `[launcher ${signal}] ${started.length} processes ended ${Math.round(endedAfterMs)} ms after the signal`,
    );
    expect(endedAfterMs).toBeLessThan(WITHIN_MS);
    await held;
  }, 90_000);
});
