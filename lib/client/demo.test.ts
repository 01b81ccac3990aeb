import { describe, expect, it } from "vitest";
import type { FetchLike } from "./attempt";
import {
  DEMO_SCENARIOS,
  DOUBLE_CLICK_HOLD_MS,
  NO_FAULTS,
  UNSAFE_ORDERS_URL,
  demoScenario,
  getDemoSettings,
  putDemoSettings,
} from "./demo";

function recordingFetch(response: () => Response) {
  const calls: { url: string; init: RequestInit }[] = [];
  const fetch: FetchLike = async (url, init) => {
    calls.push({ url, init });
    return response();
  };
  return { fetch, calls };
}

const settings = { faultsEnabled: true, networkDelayMs: 8000, loseResponse: false };

describe("demo settings client", () => {
  it("reads this account's settings", async () => {
    const { fetch, calls } = recordingFetch(() => Response.json(settings));
    expect(await getDemoSettings(fetch)).toEqual({ ok: true, settings });
    expect(calls[0]?.url).toBe("/api/demo/settings");
    expect(calls[0]?.init.credentials).toBe("same-origin");
  });

  it("sends exactly the two fault fields on PUT", async () => {
    const { fetch, calls } = recordingFetch(() => Response.json(settings));
    await putDemoSettings({ networkDelayMs: 8000, loseResponse: false }, fetch);
    expect(calls[0]?.init.method).toBe("PUT");
    expect(JSON.parse(String(calls[0]?.init.body))).toEqual({
      networkDelayMs: 8000,
      loseResponse: false,
    });
  });

  it("passes on the server's reason when demo faults are off", async () => {
    const problem = {
      type: "/problems/demo-faults-disabled",
      title: "Forbidden",
      status: 403,
      detail: "Demo faults are off.",
    };
    const { fetch } = recordingFetch(
      () =>
        new Response(JSON.stringify(problem), {
          status: 403,
          headers: { "Content-Type": "application/problem+json" },
        }),
    );
    expect(await putDemoSettings(NO_FAULTS, fetch)).toEqual({
      ok: false,
      status: 403,
      reason: "Demo faults are off.",
    });
  });

  it("reports an unreachable server without throwing", async () => {
    const fetch: FetchLike = () => Promise.reject(new TypeError("Failed to fetch"));
    expect(await getDemoSettings(fetch)).toEqual({
      ok: false,
      status: null,
      reason: "Could not reach the server.",
    });
  });
});

describe("demo scenarios", () => {
  it("sends a key to the real endpoint in every scenario but the one labelled broken", () => {
    for (const scenario of DEMO_SCENARIOS) {
      expect(scenario.strategy.sendIdempotencyKey).toBe(!scenario.broken);
      expect(scenario.strategy.url === UNSAFE_ORDERS_URL).toBe(scenario.broken);
    }
  });

  it("turns off the submit guard only for the double-click demo", () => {
    expect(DEMO_SCENARIOS.filter((s) => !s.strategy.guardSubmit).map((s) => s.id)).toEqual([
      "double-click",
    ]);
  });

  it("pays with the 3-D Secure card in the webhook scenarios, and only the duplicates ask the provider for more", () => {
    const webhookScenarios = DEMO_SCENARIOS.filter((s) => s.paymentMethod);
    expect(
      webhookScenarios.map((s) => [s.id, s.paymentMethod, Boolean(s.redeliversWebhooks)]),
    ).toEqual([
      ["three-d-secure", "pm_card_authenticationRequired", false],
      ["duplicate-webhooks", "pm_card_authenticationRequired", true],
    ]);
    // The duplicates come from the simulator's admin API, which the server gives only with demo faults on.
    expect(demoScenario("duplicate-webhooks").needsServerFaults).toBe(true);
    expect(demoScenario("three-d-secure").needsServerFaults).toBe(false);
  });

  it("asks the server for faults in server-side scenarios and the double-click's hold, within the API's limits", () => {
    for (const scenario of DEMO_SCENARIOS) {
      const faults = scenario.faults(12_000);
      const hasFaults = faults.networkDelayMs > 0 || faults.loseResponse;
      // The duplicates need the server's demo mode, but no fault of the checkout's own.
      const checkoutFaults = scenario.needsServerFaults && !scenario.redeliversWebhooks;
      expect(hasFaults).toBe(checkoutFaults || scenario.id === "double-click");
      expect(faults.networkDelayMs).toBeLessThanOrEqual(20_000);
    }
    // Held past a person's second click (at most 500 ms later), inside the client's 6 s timeout.
    expect(demoScenario("double-click").faults(0).networkDelayMs).toBe(DOUBLE_CLICK_HOLD_MS);
    expect(DOUBLE_CLICK_HOLD_MS).toBeGreaterThan(500);
    expect(DOUBLE_CLICK_HOLD_MS).toBeLessThan(6_000);
    expect(demoScenario("slow-network").faults(3000)).toEqual({
      networkDelayMs: 3000,
      loseResponse: false,
    });
  });
});
