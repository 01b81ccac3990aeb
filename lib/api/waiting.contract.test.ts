import { randomUUID } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { paymentProviderKeyPrefix } from "@/lib/orders/provider-key";
import { baseUrl, cartBody, createAccount, postOrder } from "@/lib/testing/api-client";
import { HOLD_WHILE_OTHERS_ARRIVE_MS, setDemoSettings } from "@/lib/testing/api-client-demo";
import { closeTestDb, countRows, keyRow, testDb } from "@/lib/testing/database";
import { appSimulator, ledgerFor } from "@/lib/testing/payment-simulator";
import { itOnServer } from "@/lib/testing/postgres-server-only";

/**
 * Prefer: wait=N over real HTTP: a duplicate that asks to wait for the first
 * attempt gets its answer, replayed, where today it gets a 409; and a storm
 * of them costs one order, one charge, and nothing that stays.
 */
afterAll(closeTestDb);

/** A shopper whose checkouts are held before the charge, so duplicates overlap the first. */
async function slowShopper() {
  const shopper = await createAccount();
  await setDemoSettings(shopper.token, {
    networkDelayMs: HOLD_WHILE_OTHERS_ARRIVE_MS,
    loseResponse: false,
  });
  return shopper;
}

async function metric(name: string): Promise<number> {
  const text = await (await fetch(`${baseUrl()}/api/metrics`)).text();
  const line = text.split("\n").find((entry) => entry.startsWith(`${name} `));
  return Number(line?.split(" ")[1]);
}

describe("a duplicate that waits for the first attempt (Prefer: wait)", () => {
  it("gets the first attempt's answer, replayed, with Preference-Applied, where one without it gets 409", async () => {
    const shopper = await slowShopper();
    const key = randomUUID();
    const body = cartBody();
    const first = postOrder({ token: shopper.token, key, body });
    await expect.poll(() => keyRow(shopper.id, key)).toMatchObject({ state: "in_flight" });

    const impatient = await postOrder({ token: shopper.token, key, body });
    expect(impatient.response.status).toBe(409);
    expect(impatient.response.headers.get("preference-applied")).toBeNull();

    const patient = await postOrder({
      token: shopper.token,
      key,
      body,
      headers: { Prefer: "wait=10" },
    });
    const firstAnswer = await first;
    expect(firstAnswer.response.status).toBe(201);
    expect(patient.response.status).toBe(201);
    expect(patient.response.headers.get("idempotent-replayed")).toBe("true");
    expect(patient.response.headers.get("preference-applied")).toBe("wait=10");
    expect(patient.text).toBe(firstAnswer.text);
    expect(await countRows("orders", shopper.id)).toBe(1);
  });

  it("waits no longer than it asked: at its deadline, 409 with Retry-After", async () => {
    const shopper = await slowShopper();
    const key = randomUUID();
    const body = cartBody();
    const first = postOrder({ token: shopper.token, key, body });
    await expect.poll(() => keyRow(shopper.id, key)).toMatchObject({ state: "in_flight" });
    const started = Date.now();
    const patient = await postOrder({
      token: shopper.token,
      key,
      body,
      headers: { Prefer: "wait=1" },
    });
    expect(patient.response.status).toBe(409);
    expect(patient.response.headers.get("retry-after")).toBe("1");
    expect(patient.response.headers.get("preference-applied")).toBe("wait=1");
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect((await first).response.status).toBe(201);
  });

  itOnServer(
    "concurrency",
    "a storm of 500 identical requests with Prefer: wait=10: one order, one charge, every answer 201, and nothing left waiting",
    async () => {
      const shopper = await slowShopper();
      const key = randomUUID();
      const body = cartBody();
      const connectionsOf = async () =>
        (
          await testDb().query(
            `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`,
          )
        ).rows[0].n as number;
      const connectionsBefore = await connectionsOf();
      const memoryBefore = await metric("process_resident_memory_bytes");

      const answers = await Promise.all(
        Array.from({ length: 500 }, () =>
          postOrder({ token: shopper.token, key, body, headers: { Prefer: "wait=10" } }),
        ),
      );
      const statuses = answers.map((answer) => answer.response.status);
      expect(new Set(statuses)).toEqual(new Set([201]));
      const replays = answers.filter(
        (answer) => answer.response.headers.get("idempotent-replayed") === "true",
      );
      expect(replays).toHaveLength(499);
      expect(new Set(answers.map((answer) => answer.text)).size).toBe(1);
      expect(await countRows("orders", shopper.id)).toBe(1);
      const ledger = await ledgerFor(appSimulator(), {
        idempotencyKeyPrefix: paymentProviderKeyPrefix(shopper.id),
      });
      expect(ledger.payment_intents).toHaveLength(1);

      // Nobody is left waiting, and the waits held no connection of their own.
      expect(await metric("oncepay_key_waiters")).toBe(0);
      const connectionsAfter = await connectionsOf();
      const memoryAfter = await metric("process_resident_memory_bytes");
      console.log(
        `[storm] 500 with Prefer: wait=10: ${replays.length} replays; connections ${connectionsBefore} -> ${connectionsAfter}; resident memory ${(memoryBefore / 2 ** 20).toFixed(0)} -> ${(memoryAfter / 2 ** 20).toFixed(0)} MiB`,
      );
      // A connection per waiter would be 499; the pools grow by at most their size.
      expect(connectionsAfter).toBeLessThanOrEqual(connectionsBefore + 20);
      expect(memoryAfter - memoryBefore).toBeLessThan(256 * 2 ** 20);
    },
    60_000,
  );
});
