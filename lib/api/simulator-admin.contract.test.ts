import { describe, expect, inject, it } from "vitest";
import { adminFetch, appSimulator } from "@/lib/testing/payment-simulator";
import { sendRaw } from "@/lib/testing/raw-http";

/**
 * The payment simulator that `npm start` runs beside the app (the launcher
 * starts it: this is the shared test app's) answers its admin API only with
 * the admin key the launcher made for it, which the tests read from the
 * file the launcher left (SIMULATOR_ADMIN_KEY_FILE, lib/testing/app-server.ts),
 * and only when Host names it. Without either, a page in the shopper's
 * browser could read every account's ledger or slow every checkout.
 */
describe("the simulator the launcher starts", () => {
  const simulatorUrl = inject("paymentSimulatorUrl");

  it("was given a random admin key of 32 bytes (base64url), kept where the tests read it", () => {
    expect(appSimulator().adminKey).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it.each([
    ["GET", "/_simulator/ledger"],
    ["PUT", "/_simulator/faults"],
    ["POST", "/_simulator/api_keys"],
  ])("refuses %s %s without the admin key (401), and answers it with", async (method, path) => {
    const body = method === "PUT" ? "{}" : undefined;
    const refused = await fetch(`${simulatorUrl}${path}`, { method, body });
    expect(refused.status).toBe(401);
    expect(await refused.json()).toEqual({
      error: { type: "invalid_request_error", message: expect.stringContaining("admin key") },
    });

    const answered = await adminFetch(appSimulator(), path, { method, body });
    expect([200, 201]).toContain(answered.status);
  });

  it("keeps its faults when a call without the key tries to set them", async () => {
    const refused = await fetch(`${simulatorUrl}/_simulator/faults`, {
      method: "PUT",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ latencyMs: 30_000 }),
    });
    expect(refused.status).toBe(401);
    expect(await (await adminFetch(appSimulator(), "/_simulator/faults")).json()).toEqual({
      latencyMs: 0,
      failNext: null,
    });
  });

  it("refuses a request whose Host names another site (DNS rebinding), admin key and all: 421", async () => {
    const { port } = new URL(simulatorUrl);
    const answer = await sendRaw(simulatorUrl, {
      method: "GET",
      path: "/_simulator/ledger",
      headers: {
        host: `rebound.example:${port}`,
        authorization: `Bearer ${appSimulator().adminKey}`,
      },
    });
    expect(answer.status).toBe(421);
    expect(JSON.parse(answer.body)).toEqual({
      error: { type: "invalid_request_error", message: expect.stringContaining("Misdirected") },
    });
  });
});
