import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { paymentProviderKeyPrefix } from "@/lib/orders/provider-key";
import { LOCAL_SIMULATOR_SECRET_KEY } from "@/lib/payments/simulator/process";
import { StripePaymentProvider } from "@/lib/payments/stripe-provider";
import {
  createAccount,
  getOrder,
  postOrder,
  postRefund,
  type ApiAccount,
} from "@/lib/testing/api-client";
import { ledgerFor, type SimulatorAdmin } from "@/lib/testing/payment-simulator";
import { APP_READY_TIMEOUT_MS } from "@/lib/testing/app-server";
import { appServersOf } from "@/lib/testing/test-app-servers";
import { rowsAt } from "@/lib/testing/rows";
import { pendingOrder, postWebhook, signed, stripeEvent } from "@/lib/testing/webhooks";

/**
 * The crash matrix: the app is killed with SIGKILL at each dangerous point of
 * a checkout, and of a refund, restarted, and the client retries with the
 * same key. Each checkout must end with exactly one order, exactly one
 * charge in the payment simulator's ledger, the key complete, and one
 * consistent answer for the client; each refund with exactly one refund
 * row, exactly one refund at the provider, the payment's refunded total
 * equal to it, and the same.
 *
 * A webhook is killed too, on the sql store (its transaction is the shop's
 * own, the same on either store), after its commit and before its 2xx, and
 * in the longer run also after its state change and before its commit.
 * The provider then delivers the event again, as it does after no 2xx: the
 * order is settled once, shipped once, and the event recorded once.
 *
 * It runs on each idempotency store (IDEMPOTENCY_STORE). CRASH_RUNS sets
 * the checkout's runs per point (2 in `npm test` on PostgreSQL, 1 on the
 * embedded database, with the sql store only; `npm run test:crash` runs
 * 20) and the refund's (1 in `npm test`, each on a checkout's order, in
 * the same app: a restart is most of a run's time). The lease is 2 s so
 * that a crashed attempt's key can be taken over quickly.
 *
 * No step has a budget of wall time, which a busy machine spends (a fixed
 * 10 s per run failed correct runs once both cores were busy): the
 * restart is bounded by the app's readiness wait, which also ends when
 * the app exits, and the client's retries by the lease
 * (retryUntilAnswered). Each test starts and owns its app servers
 * (appServersOf): however it ends they are stopped, and a timed-out
 * test's signal ends its loop.
 */
/**
 * Both stores on PostgreSQL, where the crash matrix proves the protocol;
 * on the embedded database (the newcomer's `npm test`), the sql store once
 * per point: what it adds there is that the embedded database keeps every
 * commit across a SIGKILL, and that holds the same under either store,
 * while each restart of it costs seconds the leg must not spend twice.
 */
const ON_POSTGRES = Boolean(process.env.DATABASE_URL);
const STORES =
  ON_POSTGRES || process.env.CRASH_RUNS ? (["sql", "prisma"] as const) : (["sql"] as const);
const RUNS_PER_POINT = Number(process.env.CRASH_RUNS ?? (ON_POSTGRES ? 2 : 1));
const REFUND_RUNS_PER_POINT = Number(process.env.CRASH_RUNS ?? 1);
/** Each crash point, and how far a checkout and a refund had got by then (the key's recovery point). */
const CRASH_POINTS = [
  ["crash-after-claim", "payment_started", "claimed"],
  ["crash-after-charge", "payment_started", "refund_started"],
  ["crash-before-commit", "payment_started", "refund_started"],
  ["crash-after-commit", "finished", "finished"],
] as const;
/**
 * The points a webhook is killed at: after its commit, before its 2xx; and,
 * in the longer run (CRASH_RUNS set), after its change, before its commit
 * too (each point is a restart, and `npm test` keeps to its budget).
 */
const WEBHOOK_POINTS: readonly string[] = process.env.CRASH_RUNS
  ? ["crash-before-commit", "crash-after-commit"]
  : ["crash-after-commit"];
/** What the restarted app checks signatures with, the same across restarts. */
const WEBHOOK_SECRET = `whsec_crash_matrix_${randomUUID().replaceAll("-", "")}`;
/** What each refund asks for of its checkout's order. */
const REFUND_AMOUNT = 1000;
const LEASE_SECONDS = 2;
/** Attempts the client still makes once it has waited out the lease, before it calls the key stuck. */
const ATTEMPTS_AFTER_LEASE = 3;
/**
 * Only a net under the bounds above, for a step that hangs outright (a
 * request never answered): per run a restart's readiness wait, and a
 * minute for the run's dozen requests and its few seconds of retries.
 * Never what decides that a slow run failed.
 */
const TEST_TIMEOUT_MS =
  (RUNS_PER_POINT + REFUND_RUNS_PER_POINT + 1) * (APP_READY_TIMEOUT_MS + 60_000);

/** What each run at one crash point ended with; every count but `runs` must stay 0. */
interface PointSummary {
  recoveryPoint: string;
  runs: number;
  /** Orders, or refund rows. */
  duplicateRows: number;
  lostRows: number;
  /** Charges, or refunds, at the provider. */
  duplicateEffects: number;
  stuckKeys: number;
  /** What the client's retries saw before the definite answer, per run ("409 409 201"). */
  answers: string[];
}
const summary: Record<string, PointSummary> = {};

afterAll(() => {
  const tally = (values: string[]) =>
    Object.entries(
      values.reduce<Record<string, number>>(
        (counts, value) => ({ ...counts, [value]: (counts[value] ?? 0) + 1 }),
        {},
      ),
    )
      .map(([value, count]) => `${count}× ${value}`)
      .join("; ");
  const header =
    "store   operation crash point          key left at        runs  dup. rows  lost rows  dup. at provider  stuck keys  the client's retries saw";
  const rows = Object.entries(summary).map(([point, s]) =>
    [
      point.padEnd(38),
      s.recoveryPoint.padEnd(18),
      String(s.runs).padStart(4),
      String(s.duplicateRows).padStart(10),
      String(s.lostRows).padStart(10),
      String(s.duplicateEffects).padStart(17),
      String(s.stuckKeys).padStart(11),
      ` ${tally(s.answers)}`,
    ].join(" "),
  );
  console.info(`[crash matrix] ${RUNS_PER_POINT} runs per point\n${header}\n${rows.join("\n")}`);
});

/**
 * What a careful client does: retry the same key, honouring Retry-After,
 * until a definite answer. It calls the key stuck only once its waits
 * alone (not the time its requests took) have outlasted the crashed
 * attempt's lease, and ATTEMPTS_AFTER_LEASE more attempts got no answer:
 * by then the lease has run out on any machine, however slow, and any of
 * them could have taken the key over.
 */
async function retryUntilAnswered(
  send: () => Promise<{ response: Response; text: string }>,
  signal: AbortSignal,
): Promise<{ response: Response; text: string; statuses: number[] }> {
  const statuses: number[] = [];
  let waitedMs = 0;
  let attemptsAfterLease = 0;
  for (;;) {
    const { response, text } = await send();
    statuses.push(response.status);
    if (response.status !== 409 && response.status < 500) return { response, text, statuses };
    if (waitedMs >= LEASE_SECONDS * 1000 && ++attemptsAfterLease >= ATTEMPTS_AFTER_LEASE)
      throw new Error(
        `No answer after waiting ${waitedMs} ms (the lease is ${LEASE_SECONDS} s) and ${attemptsAfterLease} attempts since; statuses ${statuses.join(" ")}, the last: ${text}`,
      );
    const waitMs = Number(response.headers.get("retry-after") ?? 1) * 1000;
    await delay(waitMs, undefined, { signal });
    waitedMs += waitMs;
  }
}

describe.each(STORES)("on the %s store", (store) => {
  // The embedded database's folder, which the store's tests use in turn
  // (each test's servers are gone before the next test starts): one cold start per store.
  let dataDir: string;
  beforeAll(async () => {
    dataDir = path.join(await mkdtemp(path.join(tmpdir(), "oncepay-crash-")), "pglite");
  });

  afterAll(async () => {
    await rm(path.dirname(dataDir), { recursive: true, force: true });
  });

  describe.each(CRASH_POINTS)("killed at %s", (point, checkoutPoint, refundPoint) => {
    it(
      `ends with one order, one charge and a complete key, ${RUNS_PER_POINT} times out of ${RUNS_PER_POINT}; and a refund with one refund, ${REFUND_RUNS_PER_POINT} times out of ${REFUND_RUNS_PER_POINT}`,
      { timeout: TEST_TIMEOUT_MS },
      async (context) => {
        const { signal } = context;
        const startApp = appServersOf(context);
        // CRASH_FAULTS: the crash-* faults kill the server, so no other server of the tests (or of npm start) allows them.
        const start = () =>
          startApp({
            env: {
              IDEMPOTENCY_LEASE_SECONDS: String(LEASE_SECONDS),
              CRASH_FAULTS: "on",
              IDEMPOTENCY_STORE: store,
              STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
            },
            embeddedDataDir: dataDir,
          });
        let server = await start();
        /** Sends the request that crashes the server, then starts it again. */
        const crashWith = async (request: Promise<unknown>) => {
          await expect(request).rejects.toThrow(TypeError); // the connection died with the process
          await server.exited;
          server = await start();
        };
        const newSummary = (operation: string, recoveryPoint: string): PointSummary =>
          (summary[`${store.padEnd(7)} ${operation.padEnd(9)} ${point}`] = {
            recoveryPoint,
            runs: 0,
            duplicateRows: 0,
            lostRows: 0,
            duplicateEffects: 0,
            stuckKeys: 0,
            answers: [],
          });
        const checkouts = newSummary("checkout", checkoutPoint);
        const refunds = newSummary("refund", refundPoint);

        for (let run = 0; run < Math.max(RUNS_PER_POINT, REFUND_RUNS_PER_POINT); run++) {
          signal.throwIfAborted(); // timed out: the test has ended, and so have its servers
          const account = await createAccount(server.baseUrl);
          const key = randomUUID();
          const body = JSON.stringify({
            cartId: `crash-${run}`,
            items: [{ sku: "grinder-hand-burr", quantity: 1 }],
          });
          const send = (fault?: string) =>
            postOrder({
              baseUrl: server.baseUrl,
              token: account.token,
              key,
              rawBody: body,
              signal,
              ...(fault && { headers: { "OncePay-Fault": fault } }),
            });

          // A checkout's run; a refund's runs need an order, which a crash-free checkout makes.
          if (run < RUNS_PER_POINT) await crashWith(send(point));
          else if ((await send()).response.status !== 201) throw new Error("The checkout failed");
          if (run < RUNS_PER_POINT) {
            expect(await rowsAt(server.databaseUrl).keyRow(account.id, key)).toMatchObject({
              recovery_point: checkoutPoint,
            });
          }

          const answer = await retryUntilAnswered(send, signal).catch(async (error: unknown) => {
            if (signal.aborted) throw error; // the test timed out: nothing to count
            // No answer past the lease: the key is stuck, and unless an order exists, it is lost.
            checkouts.runs++;
            checkouts.stuckKeys++;
            if ((await rowsAt(server.databaseUrl).rowCounts(account.id)).orders === 0)
              checkouts.lostRows++;
            throw error;
          });
          const replay = await retryUntilAnswered(send, signal);
          const order = JSON.parse(answer.text);
          if (run < RUNS_PER_POINT)
            await checkOneOrder(server, checkouts, account, key, answer, replay, order);
          if (run < REFUND_RUNS_PER_POINT) await refundRun(account, order);
          if (run === 0 && store === "sql" && WEBHOOK_POINTS.includes(point))
            await webhookRun(account);
        }

        /**
         * A pending payment's event, delivered with the crash, then again:
         * one state change, one shipment, one recorded event.
         */
        async function webhookRun(account: ApiAccount) {
          const webhooks = newSummary("webhook", "pending");
          const pending = await pendingOrder(account.token, server.baseUrl);
          const delivery = signed(
            stripeEvent("payment_intent.succeeded", {
              id: pending.paymentIntentId,
              object: "payment_intent",
              status: "succeeded",
            }),
            { secret: WEBHOOK_SECRET },
          );
          await crashWith(
            postWebhook({ ...delivery, base: server.baseUrl, headers: { "OncePay-Fault": point } }),
          );
          const again = await postWebhook({ ...delivery, base: server.baseUrl });
          const rows = rowsAt(server.databaseUrl);
          const fulfilment = (await rows.fulfilmentOf(account.id)).filter(
            (order) => order.settled_by === "webhook",
          );
          const events = await rows.webhookEventsOf(pending.paymentIntentId);

          webhooks.runs++;
          webhooks.duplicateRows += Math.max(0, events.length - 1);
          webhooks.lostRows += events.length === 0 ? 1 : 0;
          webhooks.duplicateEffects += Math.max(0, (fulfilment[0]?.shipments ?? 0) - 1);
          webhooks.answers.push(`${again.status} ${String(again.json.outcome)}`);

          // Rolled back with its change, the event acts afresh; committed, it is a duplicate.
          expect(again).toMatchObject({
            status: 200,
            json: { outcome: point === "crash-before-commit" ? "paid" : "duplicate" },
          });
          expect(fulfilment).toEqual([{ status: "paid", settled_by: "webhook", shipments: 1 }]);
          expect(events).toHaveLength(1);
        }

        /** A refund crashed at the point, retried under its key until answered: one refund, everywhere. */
        async function refundRun(
          account: ApiAccount,
          order: { id: string; payment: { id: string } },
        ) {
          const key = randomUUID();
          const send = (fault?: string) =>
            postRefund({
              baseUrl: server.baseUrl,
              token: account.token,
              orderId: order.id,
              key,
              body: { amount: REFUND_AMOUNT },
              ...(fault && { headers: { "OncePay-Fault": fault } }),
            });
          await crashWith(send(point));
          const rows = rowsAt(server.databaseUrl);
          expect(await rows.keyRow(account.id, key)).toMatchObject({ recovery_point: refundPoint });

          const answer = await retryUntilAnswered(send, signal).catch(async (error: unknown) => {
            if (signal.aborted) throw error;
            refunds.runs++;
            refunds.stuckKeys++;
            if ((await rows.refundsOfOrder(order.id)).refunds.length === 0) refunds.lostRows++;
            throw error;
          });
          const replay = await retryUntilAnswered(send, signal);
          const recorded = await rows.refundsOfOrder(order.id);
          const atProvider = await refundsAtProvider(server.paymentSimulator.url, order.payment.id);
          const stuck = await rows.stuckKeys(account.id);

          refunds.runs++;
          refunds.duplicateRows += Math.max(0, recorded.refunds.length - 1);
          refunds.lostRows += recorded.refunds.length === 0 ? 1 : 0;
          refunds.duplicateEffects += Math.max(0, atProvider.length - 1);
          refunds.stuckKeys += stuck;
          refunds.answers.push(answer.statuses.join(" "));

          expect(recorded).toEqual({
            refunds: [
              {
                status: "succeeded",
                amount: REFUND_AMOUNT,
                provider_refund_id: atProvider[0]?.id,
              },
            ],
            refundedAmount: REFUND_AMOUNT,
          });
          expect(atProvider.map((refund) => refund.amount)).toEqual([REFUND_AMOUNT]);
          expect(stuck).toBe(0);
          expect(await rows.keyRow(account.id, key)).toMatchObject({
            state: "complete",
            response_status: 201,
          });
          expect(answer.response.status).toBe(201);
          expect(replay.text).toBe(answer.text);
          expect(replay.response.headers.get("idempotent-replayed")).toBe("true");
        }
      },
    );
  });
});

/** The checks of one checkout run, tallied first, so that the table shows what went wrong even when a check fails. */
async function checkOneOrder(
  server: { baseUrl: string; databaseUrl: string; paymentSimulator: SimulatorAdmin },
  record: PointSummary,
  account: ApiAccount,
  key: string,
  answer: { response: Response; text: string; statuses: number[] },
  replay: { response: Response; text: string },
  order: { id: string; payment: { id: string } },
): Promise<void> {
  const rows = rowsAt(server.databaseUrl);
  const counts = await rows.rowCounts(account.id);
  const keyRow = await rows.keyRow(account.id, key);
  // The provider's own ledger: every charge made for this account (a fresh account per run), under
  // any key row, so that a key deleted and claimed afresh, with a second charge, shows up here.
  const ledger = await ledgerFor(server.paymentSimulator, {
    idempotencyKeyPrefix: paymentProviderKeyPrefix(account.id),
  });
  const stuck = await rows.stuckKeys(account.id);

  record.runs++;
  record.duplicateRows += Math.max(0, counts.orders - 1);
  record.lostRows += counts.orders === 0 ? 1 : 0;
  record.duplicateEffects += Math.max(0, ledger.charges.length - 1);
  record.stuckKeys += stuck;
  record.answers.push(answer.statuses.join(" "));

  expect(counts).toEqual({ orders: 1, payments: 1 });
  expect(ledger.payment_intents).toHaveLength(1);
  expect(ledger.charges.map((charge) => charge.status)).toEqual(["succeeded"]);
  expect(stuck).toBe(0);
  expect(keyRow).toMatchObject({ state: "complete", response_status: 201 });
  // One consistent answer: the 201, the same bytes again as a replay, and the same order when fetched.
  expect(answer.response.status).toBe(201);
  expect(order.payment.id).toBe(ledger.payment_intents[0]?.id);
  expect(replay.text).toBe(answer.text);
  expect(replay.response.headers.get("idempotent-replayed")).toBe("true");
  const fetched = await getOrder({ baseUrl: server.baseUrl, token: account.token, id: order.id });
  // The order as it is now: a refund run may follow, but only after this.
  expect(fetched.text).toBe(answer.text);
}

/** Every refund the provider made of one PaymentIntent, as the ledger reads them. */
function refundsAtProvider(simulatorUrl: string, paymentIntentId: string) {
  return new StripePaymentProvider({
    secretKey: LOCAL_SIMULATOR_SECRET_KEY,
    simulatorUrl,
  }).refundsOf(paymentIntentId);
}
