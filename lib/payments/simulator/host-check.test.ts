import { randomUUID } from "node:crypto";
import { describe, expect, inject, it } from "vitest";
import { newAdminKey } from "@/lib/payments/simulator/admin-key";
import { addressedToUs, hostNames } from "@/lib/payments/simulator/host-check";
import { startPaymentSimulator } from "@/lib/payments/simulator/server";
import {
  ledgerFor,
  newSecretKey,
  withTestSimulator,
  type SimulatorAdmin,
} from "@/lib/testing/payment-simulator";
import { sendRaw, type RawResponse } from "@/lib/testing/raw-http";

/**
 * DNS rebinding: a page at evil.example rebinds its name to 127.0.0.1, and
 * the shopper's browser then sends the page's requests to the simulator,
 * with `Host: evil.example:<port>`, and lets the page read the answers. The
 * simulator answers only a Host that names it; anything else is 421 before
 * any work, on the Stripe API as on the admin API.
 */
describe("addressedToUs", () => {
  const names = hostNames("127.0.0.1", ["payments.internal"]);

  it.each([
    "127.0.0.1:12111",
    "localhost:12111",
    "LocalHost:12111",
    "[::1]:12111",
    "127.0.0.1",
    "payments.internal:443",
  ])("answers Host %j", (host) => {
    expect(addressedToUs(host, names)).toBe(true);
  });

  it.each([
    "evil.example:12111",
    "evil.example",
    "127.0.0.1.evil.example:12111",
    "localhost.evil.example",
    "evil.example@127.0.0.1",
    "127.0.0.1:12111/",
    "127.0.0.1:",
    "127.0.0.1 ",
    "",
    undefined,
  ])("refuses Host %j", (host) => {
    expect(addressedToUs(host, names)).toBe(false);
  });

  it("takes the address it listens on, unless that is every address (0.0.0.0, ::)", () => {
    expect(addressedToUs("10.1.2.3:12111", hostNames("10.1.2.3"))).toBe(true);
    expect(addressedToUs("[fd00::5]:12111", hostNames("fd00::5"))).toBe(true);
    expect(addressedToUs("0.0.0.0:12111", hostNames("0.0.0.0"))).toBe(false);
    expect(addressedToUs("10.1.2.3:12111", hostNames("0.0.0.0"))).toBe(false);
  });
});

describe("a request whose Host names another site", () => {
  const simulator = withTestSimulator();
  const hostOf = (name: string) => `${name}:${simulator.port}`;

  const ledgerAs = (admin: SimulatorAdmin, host: string) =>
    sendRaw(admin.url, {
      method: "GET",
      path: "/_simulator/ledger",
      headers: { host, authorization: `Bearer ${admin.adminKey}` },
    });

  function expectMisdirected(answer: RawResponse): void {
    expect(answer.status).toBe(421);
    expect(JSON.parse(answer.body)).toEqual({
      error: {
        type: "invalid_request_error",
        message: expect.stringMatching(/^Misdirected request \(Host "evil\.example:\d+"\)/),
      },
    });
  }

  it("is refused on the admin API (421), admin key or not: the page learns no ledger", async () => {
    expectMisdirected(await ledgerAs(simulator, hostOf("evil.example")));
  });

  it("is refused on the Stripe API (421) before anything is charged", async () => {
    const key = randomUUID();
    const answer = await sendRaw(simulator.url, {
      method: "POST",
      path: "/v1/payment_intents",
      headers: {
        host: hostOf("evil.example"),
        authorization: `Bearer ${await newSecretKey(simulator)}`,
        "content-type": "application/x-www-form-urlencoded",
        "idempotency-key": key,
      },
      body: "amount=1900&currency=usd&payment_method=pm_card_visa&confirm=true",
    });
    expectMisdirected(answer);
    expect(await ledgerFor(simulator, { idempotencyKey: key })).toMatchObject({
      payment_intents: [],
      charges: [],
    });
  });

  it.each(["127.0.0.1", "localhost", "[::1]"])(
    "is answered when Host is %s and the simulator's port",
    async (name) => {
      expect((await ledgerAs(simulator, hostOf(name))).status).toBe(200);
    },
  );

  it("is answered when Host is a name it was given (allowedHosts), and refused for any other", async () => {
    const named = await startPaymentSimulator({
      databaseUrl: inject("databaseUrl"),
      poolMax: 1,
      adminKey: newAdminKey(),
      allowedHosts: ["Payments.Internal"],
    });
    try {
      expect((await ledgerAs(named, `payments.internal:${named.port}`)).status).toBe(200);
      expectMisdirected(await ledgerAs(named, `evil.example:${named.port}`));
    } finally {
      await named.close();
    }
  });
});
