import { describe, expect, it } from "vitest";
import {
  RETRY_EVERY_MS,
  runCrashScenario,
  summarizeRetries,
  type CrashDeps,
} from "@/lib/client/lab-crash";
import type { CrashPlan, StormRequest } from "@/lib/lab/storms";

const request: StormRequest = {
  method: "POST",
  path: "/api/lab/redis-orders",
  headers: { "Content-Type": "application/json", "Idempotency-Key": "k" },
  body: {
    cartId: "cart_1",
    items: [{ sku: "mug-ceramic-350", quantity: 1 }],
    paymentMethod: "pm_card_visa",
  },
};
const crash: CrashPlan = {
  header: { name: "OncePay-Lab-Crash", value: "after-charge" },
  inFlightExpirySeconds: 20,
};

/** A server that answers from a script (one answer per request, the last one forever), on a clock the sleeps move. */
function scripted(
  answers: (number | "drop")[],
): CrashDeps & { sent: { crashHeader: string | undefined; at: number }[] } {
  let clock = 0;
  const sent: { crashHeader: string | undefined; at: number }[] = [];
  return {
    sent,
    now: () => clock,
    sleep: async (ms) => {
      clock += ms;
    },
    fetch: async (_path, init) => {
      const headers = init.headers as Record<string, string>;
      sent.push({ crashHeader: headers["OncePay-Lab-Crash"], at: clock });
      const answer = answers[Math.min(sent.length - 1, answers.length - 1)]!;
      if (answer === "drop") throw new TypeError("Failed to fetch");
      return new Response("{}", { status: answer });
    },
  };
}

describe("runCrashScenario", () => {
  it("crashes only the first request, retries at once, then every second while the key is held, and stops at the final answer", async () => {
    const server = scripted(["drop", 409, 409, 409, 201]);
    const observation = await runCrashScenario(server, { stormId: "s", request, crash });

    expect(server.sent.map((send) => send.crashHeader)).toEqual([
      "after-charge",
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
    expect(server.sent.map((send) => send.at)).toEqual([
      0,
      0,
      RETRY_EVERY_MS,
      2 * RETRY_EVERY_MS,
      3 * RETRY_EVERY_MS,
    ]);
    expect(observation.attempts.map((attempt) => attempt.label)).toEqual([
      "network error",
      "409",
      "409",
      "409",
      "201",
    ]);
    expect(summarizeRetries(observation.attempts)).toEqual({
      atOnce: "409",
      inProgressMs: 3 * RETRY_EVERY_MS,
      final: "201",
    });
  });

  it("stops after the retry at once when that is already final (a strategy that keeps no in-progress state)", async () => {
    const server = scripted(["drop", 201]);
    const observation = await runCrashScenario(server, {
      stormId: "s",
      request,
      crash: { ...crash, inFlightExpirySeconds: null },
    });
    expect(observation.attempts.map((attempt) => attempt.label)).toEqual(["network error", "201"]);
    expect(summarizeRetries(observation.attempts)).toEqual({
      atOnce: "201",
      inProgressMs: null,
      final: "201",
    });
  });

  it("counts the expiry from the crashed request's answer, however long that took", async () => {
    let clock = 0;
    const server = scripted(["drop", 409]);
    const slowFirst: CrashDeps = {
      now: () => clock + server.now(),
      sleep: server.sleep,
      fetch: async (path, init) => {
        // The key store behind the first request starts on first use: 12 s.
        if (server.sent.length === 0) clock += 12_000;
        return server.fetch(path, init);
      },
    };
    const observation = await runCrashScenario(slowFirst, { stormId: "s", request, crash });
    // Retries go on until a margin (15 s) after the expiry counted from the crash, not from the start.
    expect(observation.attempts.at(-1)!.atMs).toBeGreaterThanOrEqual(
      12_000 + 20_000 + 15_000 - RETRY_EVERY_MS,
    );
  });

  it("gives up a margin after the key's expiry when the key never frees", async () => {
    const server = scripted(["drop", 409]);
    const observation = await runCrashScenario(server, { stormId: "s", request, crash });
    const last = observation.attempts.at(-1)!;
    expect(last.label).toBe("409");
    expect(last.atMs).toBeGreaterThanOrEqual(20_000);
    expect(last.atMs).toBeLessThanOrEqual(20_000 + 15_000);
    expect(summarizeRetries(observation.attempts).final).toBeNull();
  });

  it("reports every answer as it comes, for the page to show progress", async () => {
    const seen: number[] = [];
    await runCrashScenario(
      scripted([500, 409, 201]),
      { stormId: "s", request, crash },
      (attempts) => seen.push(attempts.length),
    );
    expect(seen).toEqual([1, 2, 3]);
  });
});
