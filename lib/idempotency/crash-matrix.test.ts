import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { paymentProviderKeyPrefix } from "@/lib/orders/provider-key";
import { createAccount, getOrder, postOrder } from "@/lib/testing/api-client";
import { ledgerFor } from "@/lib/testing/payment-simulator";
import { startAppServer, type AppServer } from "@/lib/testing/app-server";
import { rowsAt } from "@/lib/testing/rows";

/**
 * The crash matrix: the app is killed with SIGKILL at each dangerous point of
 * a checkout, restarted, and the client retries with the same key. Each run
 * must end with exactly one order, exactly one charge in the payment
 * simulator's ledger, the key complete, and one consistent answer for the
 * client.
 *
 * It runs on each idempotency store (IDEMPOTENCY_STORE). CRASH_RUNS sets
 * the runs per point (5 in `npm test`; `npm run test:crash` runs 20). The
 * lease is 2 s so that a crashed attempt's key can be taken over quickly.
 */
const STORES = ["sql", "prisma"] as const;
const RUNS_PER_POINT = Number(process.env.CRASH_RUNS ?? 5);
/** Each crash point, and how far the request had got by then (the key's recovery point). */
const CRASH_POINTS = [
  ["crash-after-claim", "claimed"],
  ["crash-after-charge", "payment_started"],
  ["crash-before-commit", "charged"],
  ["crash-after-commit", "finished"],
] as const;
const LEASE_SECONDS = 2;
const RETRY_BUDGET_MS = 20_000;

// A run of one point: a crash, a restart and the client's retries, ~3 s.
const TIME_PER_RUN_MS = 10_000;

let server: AppServer;
let dataDir: string;
let store: (typeof STORES)[number];
/** What each run at one crash point ended with; every count but `runs` must stay 0. */
interface PointSummary {
  recoveryPoint: string;
  runs: number;
  duplicateOrders: number;
  lostOrders: number;
  duplicateCharges: number;
  stuckKeys: number;
  /** What the client's retries saw before the definite answer, per run ("409 409 201"). */
  answers: string[];
}
const summary: Record<string, PointSummary> = {};

async function start(): Promise<AppServer> {
  // CRASH_FAULTS: the crash-* faults kill the server, so no other server of the tests (or of npm start) allows them.
  return startAppServer({
    env: {
      IDEMPOTENCY_LEASE_SECONDS: String(LEASE_SECONDS),
      CRASH_FAULTS: "on",
      IDEMPOTENCY_STORE: store,
    },
    embeddedDataDir: dataDir,
  });
}

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
    "store   crash point          key left at      runs  dup. orders  lost orders  dup. charges  stuck keys  the client's retries saw";
  const rows = Object.entries(summary).map(([point, s]) =>
    [
      point.padEnd(28),
      s.recoveryPoint.padEnd(16),
      String(s.runs).padStart(4),
      String(s.duplicateOrders).padStart(12),
      String(s.lostOrders).padStart(12),
      String(s.duplicateCharges).padStart(13),
      String(s.stuckKeys).padStart(11),
      ` ${tally(s.answers)}`,
    ].join(" "),
  );
  console.info(`[crash matrix] ${RUNS_PER_POINT} runs per point\n${header}\n${rows.join("\n")}`);
});

/** What a careful client does: retry the same key, honouring Retry-After, until a definite answer. */
async function retryUntilAnswered(
  token: string,
  key: string,
  body: string,
): Promise<{ response: Response; text: string; statuses: number[] }> {
  const deadline = Date.now() + RETRY_BUDGET_MS;
  const statuses: number[] = [];
  for (;;) {
    const { response, text } = await postOrder({
      baseUrl: server.baseUrl,
      token,
      key,
      rawBody: body,
    });
    statuses.push(response.status);
    if (response.status !== 409 && response.status < 500) return { response, text, statuses };
    if (Date.now() > deadline)
      throw new Error(
        `No answer within ${RETRY_BUDGET_MS} ms; last status ${response.status}: ${text}`,
      );
    await new Promise((resolve) =>
      setTimeout(resolve, Number(response.headers.get("retry-after") ?? 1) * 1000),
    );
  }
}

describe.each(STORES)("on the %s store", (storeName) => {
  beforeAll(async () => {
    store = storeName;
    dataDir = path.join(await mkdtemp(path.join(tmpdir(), "oncepay-crash-")), "pglite");
    server = await start();
  });

  afterAll(async () => {
    await server?.stop();
    await rm(path.dirname(dataDir), { recursive: true, force: true });
  });

  describe.each(CRASH_POINTS)("killed at %s", (point, recoveryPoint) => {
    it(
      `ends with one order, one charge and a complete key, ${RUNS_PER_POINT} times out of ${RUNS_PER_POINT}`,
      { timeout: RUNS_PER_POINT * TIME_PER_RUN_MS },
      async () => {
        const record: PointSummary = (summary[`${storeName.padEnd(7)} ${point}`] = {
          recoveryPoint,
          runs: 0,
          duplicateOrders: 0,
          lostOrders: 0,
          duplicateCharges: 0,
          stuckKeys: 0,
          answers: [],
        });
        for (let run = 0; run < RUNS_PER_POINT; run++) {
          const account = await createAccount(server.baseUrl);
          const key = randomUUID();
          const body = JSON.stringify({
            cartId: `crash-${run}`,
            items: [{ sku: "grinder-hand-burr", quantity: 1 }],
          });

          const crashed = postOrder({
            baseUrl: server.baseUrl,
            token: account.token,
            key,
            rawBody: body,
            headers: { "OncePay-Fault": point },
          });
          await expect(crashed).rejects.toThrow(TypeError); // the connection died with the process
          await server.exited;
          server = await start();
          expect(await rowsAt(server.databaseUrl).keyRow(account.id, key)).toMatchObject({
            recovery_point: recoveryPoint,
          });

          const answer = await retryUntilAnswered(account.token, key, body).catch(
            async (error: unknown) => {
              // No answer within the budget: the key is stuck, and unless an order exists, it is lost.
              record.runs++;
              record.stuckKeys++;
              if ((await rowsAt(server.databaseUrl).rowCounts(account.id)).orders === 0)
                record.lostOrders++;
              throw error;
            },
          );
          const replay = await retryUntilAnswered(account.token, key, body);
          const counts = await rowsAt(server.databaseUrl).rowCounts(account.id);
          const keyRow = await rowsAt(server.databaseUrl).keyRow(account.id, key);
          // The provider's own ledger: every charge made for this account (a fresh account per run), under
          // any key row, so that a key deleted and claimed afresh, with a second charge, shows up here.
          const ledger = await ledgerFor(server.paymentSimulator, {
            idempotencyKeyPrefix: paymentProviderKeyPrefix(account.id),
          });
          const stuck = await rowsAt(server.databaseUrl).stuckKeys(account.id);

          // Tally first, so that the table shows what went wrong even when a check below fails.
          record.runs++;
          record.duplicateOrders += Math.max(0, counts.orders - 1);
          record.lostOrders += counts.orders === 0 ? 1 : 0;
          record.duplicateCharges += Math.max(0, ledger.charges.length - 1);
          record.stuckKeys += stuck;
          record.answers.push(answer.statuses.join(" "));

          expect(counts).toEqual({ orders: 1, payments: 1 });
          expect(ledger.payment_intents).toHaveLength(1);
          expect(ledger.charges.map((charge) => charge.status)).toEqual(["succeeded"]);
          expect(stuck).toBe(0);
          expect(keyRow).toMatchObject({ state: "complete", response_status: 201 });
          // One consistent answer: the 201, the same bytes again as a replay, and the same order when fetched.
          expect(answer.response.status).toBe(201);
          const order = JSON.parse(answer.text);
          expect(order.payment.id).toBe(ledger.payment_intents[0]?.id);
          expect(replay.text).toBe(answer.text);
          expect(replay.response.headers.get("idempotent-replayed")).toBe("true");
          const fetched = await getOrder({
            baseUrl: server.baseUrl,
            token: account.token,
            id: order.id,
          });
          expect(fetched.text).toBe(answer.text);
        }
      },
    );
  });
});
