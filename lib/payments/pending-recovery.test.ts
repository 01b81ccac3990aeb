import pg from "pg";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { LOCAL_SIMULATOR_SECRET_KEY } from "@/lib/payments/simulator/process";
import { settleStalePendingPayments } from "@/lib/payments/pending-recovery";
import { StripePaymentProvider } from "@/lib/payments/stripe-provider";
import { createAccount, type ApiAccount } from "@/lib/testing/api-client";
import { startAppServer, type AppServer } from "@/lib/testing/app-server";
import { adminFetch } from "@/lib/testing/payment-simulator";
import { answerChallenge, orderState, pendingOrder, recordedEvents } from "@/lib/testing/webhooks";

/**
 * The recovery path of a payment that waits on the shopper's bank, when no
 * event comes: the shop's endpoint is down (here: every delivery to it held
 * at the provider, so none arrives however long the retries run). The
 * recovery worker asks the provider about pending payments and settles each
 * once; the event, when it finally arrives, changes nothing. An app of its
 * own, since holding the shared app's deliveries would hold every test's.
 */
let server: AppServer;
let db: pg.Pool;
let account: ApiAccount;
let endpointId: string;

beforeAll(async () => {
  server = await startAppServer();
  db = new pg.Pool({ connectionString: server.databaseUrl, max: 2 });
  db.on("error", () => undefined);
  account = await createAccount(server.baseUrl);
  const endpoints = (await (
    await adminFetch(server.paymentSimulator, "/_simulator/webhook_endpoints")
  ).json()) as { data: { id: string; url: string }[] };
  const configured = endpoints.data.find((endpoint) => endpoint.url.startsWith(server.baseUrl));
  if (!configured) throw new Error("The launcher configured no webhook endpoint for the app");
  endpointId = configured.id;
  const held = await adminFetch(
    server.paymentSimulator,
    `/_simulator/webhook_endpoints/${endpointId}/hold`,
    { method: "POST" },
  );
  expect(held.status).toBe(200);
});

afterAll(async () => {
  await db?.end();
  await server?.stop();
});

const provider = () =>
  new StripePaymentProvider({
    secretKey: LOCAL_SIMULATOR_SECRET_KEY,
    simulatorUrl: server.paymentSimulator.url,
  });

const recover = () =>
  settleStalePendingPayments(db, provider(), { olderThanSeconds: 0, batchSize: 100 });

describe("pending payments no event settled", () => {
  it("are settled once by the recovery worker, as the provider says; the late event then changes nothing", async () => {
    const paid = await pendingOrder(account.token, server.baseUrl);
    const failed = await pendingOrder(account.token, server.baseUrl);
    const waiting = await pendingOrder(account.token, server.baseUrl);
    await answerChallenge(paid.challengeUrl, "complete");
    await answerChallenge(failed.challengeUrl, "fail");
    expect(await orderState(paid.id, db)).toMatchObject({ status: "pending" });

    const report = await recover();

    // The database may hold other tests' pending payments too: these three are among those asked about.
    expect(report.asked).toBeGreaterThanOrEqual(3);
    expect(report.settled).toBeGreaterThanOrEqual(2);
    expect(await orderState(paid.id, db)).toMatchObject({
      status: "paid",
      settled_by: "recovery",
      shipments: 1,
    });
    expect(await orderState(failed.id, db)).toMatchObject({
      status: "failed",
      settled_by: "recovery",
      decline_code: "payment_intent_authentication_failure",
      shipments: 0,
    });
    // The shopper has not authenticated yet: it stays pending, to be asked about again.
    await recover();
    expect(await orderState(waiting.id, db)).toMatchObject({ status: "pending", shipments: 0 });

    // The endpoint is back: the held events arrive, late, and find nothing to change.
    const released = await adminFetch(
      server.paymentSimulator,
      `/_simulator/webhook_endpoints/${endpointId}/release`,
      { method: "POST", body: "{}" },
    );
    expect(released.status).toBe(200);
    await vi.waitFor(async () => {
      expect(await recordedEvents(paid.paymentIntentId, db)).toMatchObject([
        { type: "payment_intent.succeeded", outcome: "unchanged" },
      ]);
      expect(await recordedEvents(failed.paymentIntentId, db)).toMatchObject([
        { type: "payment_intent.payment_failed", outcome: "unchanged" },
      ]);
    });
    expect(await orderState(paid.id, db)).toMatchObject({ status: "paid", shipments: 1 });
  });
});
