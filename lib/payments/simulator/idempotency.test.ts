import { randomUUID } from "node:crypto";
import Stripe from "stripe";
import { describe, expect, it } from "vitest";
import {
  ledgerFor,
  newSecretKey,
  postIntent,
  setFaults,
  withTestSimulator,
  stripeFor,
} from "@/lib/testing/payment-simulator";
import { sendOverlapping } from "@/lib/testing/raw-http";
import { itOnServer } from "@/lib/testing/postgres-server-only";

/**
 * Stripe's Idempotency-Key semantics at the simulator: replay byte for byte,
 * 400 for a reused key with other parameters, 409 while the first request
 * runs, and exactly one charge however many identical requests race.
 */
const simulator = withTestSimulator();

const VISA = "amount=1900&currency=usd&payment_method=pm_card_visa&confirm=true&metadata[order]=42";

describe("a repeated request with the same key", () => {
  it("gets the saved status and body byte for byte, marked Idempotent-Replayed, and charges once", async () => {
    const secretKey = await newSecretKey(simulator);
    const key = randomUUID();
    const first = await postIntent(simulator, { secretKey, key, body: VISA });
    const again = await postIntent(simulator, { secretKey, key, body: VISA });

    expect(first.status).toBe(200);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    expect(again.status).toBe(200);
    expect(again.text).toBe(first.text);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.headers.get("idempotency-key")).toBe(key);
    // Each attempt has its own request id; the replay names the original one.
    expect(again.headers.get("request-id")).not.toBe(first.headers.get("request-id"));
    expect(again.headers.get("original-request")).toBe(first.headers.get("request-id"));
    expect((await ledgerFor(simulator, { idempotencyKey: key })).charges).toHaveLength(1);
  });

  it("replays a decline too: the 402 is the saved result, not a second failed charge", async () => {
    const secretKey = await newSecretKey(simulator);
    const key = randomUUID();
    const body = "amount=1900&currency=usd&payment_method=pm_card_chargeDeclined&confirm=true";
    const first = await postIntent(simulator, { secretKey, key, body });
    const again = await postIntent(simulator, { secretKey, key, body });
    expect([first.status, again.status]).toEqual([402, 402]);
    expect(again.text).toBe(first.text);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect((await ledgerFor(simulator, { idempotencyKey: key })).charges).toHaveLength(1);
  });

  it("treats the same parameters in another order as the same request", async () => {
    const secretKey = await newSecretKey(simulator);
    const key = randomUUID();
    const first = await postIntent(simulator, { secretKey, key, body: VISA });
    const reordered = await postIntent(simulator, {
      secretKey,
      key,
      body: "metadata[order]=42&confirm=true&payment_method=pm_card_visa&currency=usd&amount=1900",
    });
    expect(reordered.text).toBe(first.text);
    expect(reordered.headers.get("idempotent-replayed")).toBe("true");
  });

  it("replays through the SDK: the same payment intent, one charge", async () => {
    const stripe = stripeFor(simulator, await newSecretKey(simulator));
    const key = randomUUID();
    const params = { amount: 1900, currency: "usd", payment_method: "pm_card_visa", confirm: true };
    const first = await stripe.paymentIntents.create(params, { idempotencyKey: key });
    const again = await stripe.paymentIntents.create(params, { idempotencyKey: key });
    expect(again.id).toBe(first.id);
    expect(again.lastResponse.headers["idempotent-replayed"]).toBe("true");
    expect((await ledgerFor(simulator, { idempotencyKey: key })).charges).toHaveLength(1);
  });
});

describe("a key reused with different parameters", () => {
  it("answers 400 idempotency_error, charges nothing more, and keeps the first result", async () => {
    const secretKey = await newSecretKey(simulator);
    const key = randomUUID();
    const first = await postIntent(simulator, { secretKey, key, body: VISA });
    const other = await postIntent(simulator, {
      secretKey,
      key,
      body: VISA.replace("amount=1900", "amount=2000"),
    });

    expect(other.status).toBe(400);
    expect(JSON.parse(other.text)).toEqual({
      error: {
        type: "idempotency_error",
        message: expect.stringContaining("can only be used with the same parameters"),
      },
    });
    expect(other.headers.get("idempotent-replayed")).toBeNull();
    expect((await postIntent(simulator, { secretKey, key, body: VISA })).text).toBe(first.text);
    expect((await ledgerFor(simulator, { idempotencyKey: key })).charges).toHaveLength(1);
  });

  it("is a StripeIdempotencyError in the SDK", async () => {
    const stripe = stripeFor(simulator, await newSecretKey(simulator));
    const key = randomUUID();
    await stripe.paymentIntents.create(
      { amount: 1900, currency: "usd", payment_method: "pm_card_visa", confirm: true },
      { idempotencyKey: key },
    );
    const error = await stripe.paymentIntents
      .create(
        { amount: 1900, currency: "usd", payment_method: "pm_card_chargeDeclined", confirm: true },
        { idempotencyKey: key },
      )
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(Stripe.errors.StripeIdempotencyError);
    expect(error).toMatchObject({ statusCode: 400 });
  });
});

describe("a request that fails validation", () => {
  it("saves nothing under its key, so the corrected request can use the same key", async () => {
    const secretKey = await newSecretKey(simulator);
    const key = randomUUID();
    const invalid = await postIntent(simulator, {
      secretKey,
      key,
      body: "amount=abc&currency=usd",
    });
    expect(invalid.status).toBe(400);
    const valid = await postIntent(simulator, { secretKey, key, body: VISA });
    expect(valid.status).toBe(200);
    expect(valid.headers.get("idempotent-replayed")).toBeNull();
  });

  it("refuses a key longer than 255 characters", async () => {
    const answer = await postIntent(simulator, {
      secretKey: await newSecretKey(simulator),
      key: "k".repeat(256),
      body: VISA,
    });
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.text).error).toMatchObject({
      type: "invalid_request_error",
      message: expect.stringContaining("Idempotency-Key"),
    });
  });
});

describe("the same key while its first request is still running", () => {
  it("answers 409 idempotency_error and saves nothing; once the first finishes, a retry gets its result", async () => {
    expect((await setFaults(simulator, { latencyMs: 1500 })).status).toBe(200);
    const secretKey = await newSecretKey(simulator);
    const key = randomUUID();
    const slow = postIntent(simulator, { secretKey, key, body: VISA });
    await new Promise((resolve) => setTimeout(resolve, 300));

    const busy = await postIntent(simulator, { secretKey, key, body: VISA });
    expect(busy.status).toBe(409);
    expect(JSON.parse(busy.text)).toEqual({
      error: expect.objectContaining({
        type: "idempotency_error",
        code: "idempotency_key_in_use",
        message: expect.stringContaining(
          "There is currently another in-progress request using this Idempotency Key",
        ),
      }),
    });

    const first = await slow;
    expect(first.status).toBe(200);
    await setFaults(simulator, {});
    const retry = await postIntent(simulator, { secretKey, key, body: VISA });
    expect(retry.text).toBe(first.text);
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    expect((await ledgerFor(simulator, { idempotencyKey: key })).charges).toHaveLength(1);
  });

  it("does not block other keys or other accounts", async () => {
    await setFaults(simulator, { latencyMs: 1000 });
    const key = randomUUID();
    const [slowAccount, otherKeyAccount, otherAccount] = await Promise.all([
      newSecretKey(simulator),
      newSecretKey(simulator),
      newSecretKey(simulator),
    ]);
    const slow = postIntent(simulator, { secretKey: slowAccount, key, body: VISA });
    await new Promise((resolve) => setTimeout(resolve, 200));
    const [otherKey, otherAccountAnswer] = await Promise.all([
      postIntent(simulator, { secretKey: otherKeyAccount, key: randomUUID(), body: VISA }),
      postIntent(simulator, { secretKey: otherAccount, key, body: VISA }),
    ]);
    expect([otherKey.status, otherAccountAnswer.status, (await slow).status]).toEqual([
      200, 200, 200,
    ]);
  });
});

// PGlite runs every statement of every connection one after another, so
// concurrent claims can never interleave there and these tests would pass
// even without the unique claim. They mean something only on PostgreSQL.
describe("identical requests racing", () => {
  itOnServer(
    "concurrency",
    "20 SDK calls in flight at once with one key: one charge, one intent, 19 replays",
    async () => {
      const stripe = stripeFor(simulator, await newSecretKey(simulator));
      const key = randomUUID();
      let attempts = 0;
      stripe.on("request", () => attempts++);
      const params = {
        amount: 1900,
        currency: "usd",
        payment_method: "pm_card_visa",
        confirm: true,
      };

      const results = await Promise.all(
        Array.from({ length: 20 }, () =>
          stripe.paymentIntents.create(params, { idempotencyKey: key }),
        ),
      );

      // Calls that met the key in flight got 409, which the SDK retried (same
      // key) until the saved result was there to replay.
      expect(new Set(results.map((intent) => intent.id)).size).toBe(1);
      expect(
        results.filter((intent) => intent.lastResponse.headers["idempotent-replayed"] !== "true"),
      ).toHaveLength(1);
      expect(attempts).toBeGreaterThanOrEqual(20);
      const ledger = await ledgerFor(simulator, { idempotencyKey: key });
      expect(ledger.payment_intents).toHaveLength(1);
      expect(ledger.charges).toHaveLength(1);
    },
  );

  itOnServer(
    "concurrency",
    "20 raw requests provably in flight together: one charge; the others 409 or the replay",
    async () => {
      const secretKey = await newSecretKey(simulator);
      const key = randomUUID();
      const request = {
        method: "POST",
        path: "/v1/payment_intents",
        headers: {
          Authorization: `Bearer ${secretKey}`,
          "Idempotency-Key": key,
          "Content-Type": "application/x-www-form-urlencoded",
          "Content-Length": Buffer.byteLength(VISA),
        },
        body: VISA,
      };
      const batch = await sendOverlapping(
        simulator.url,
        Array.from({ length: 20 }, () => request),
      );

      expect(
        Math.min(...batch.responses.map((response) => response.receivedAt)),
      ).toBeGreaterThanOrEqual(batch.lastSentAt);
      const fresh = batch.responses.filter(
        (response) =>
          response.status === 200 && response.headers["idempotent-replayed"] === undefined,
      );
      expect(fresh).toHaveLength(1);
      for (const response of batch.responses) {
        expect([200, 409]).toContain(response.status);
        if (response.status === 200) expect(response.body).toBe(fresh[0]!.body);
      }
      const ledger = await ledgerFor(simulator, { idempotencyKey: key });
      expect(ledger.charges).toHaveLength(1);
    },
  );

  itOnServer(
    "concurrency",
    "20 different keys at once: 20 charges (the claim serialises one key, not the service)",
    async () => {
      const stripe = stripeFor(simulator, await newSecretKey(simulator));
      const keys = Array.from({ length: 20 }, () => randomUUID());
      const params = {
        amount: 1900,
        currency: "usd",
        payment_method: "pm_card_visa",
        confirm: true,
      };
      const results = await Promise.all(
        keys.map((key) => stripe.paymentIntents.create(params, { idempotencyKey: key })),
      );
      expect(new Set(results.map((intent) => intent.id)).size).toBe(20);
      for (const key of keys)
        expect((await ledgerFor(simulator, { idempotencyKey: key })).charges).toHaveLength(1);
    },
  );
});
