import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { runCrashScenario, summarizeRetries, type CrashObservation } from "@/lib/client/lab-crash";
import { LAB_STORM_METADATA } from "@/lib/lab/charge-tags";
import type { StormReport } from "@/lib/lab/storms";
import { LAB_STRATEGIES, LAB_STRATEGY_INFO, type LabStrategy } from "@/lib/lab/strategies";
import { PROVIDER_KEY_METADATA } from "@/lib/payments/stripe-provider";
import { createAccount, type ApiAccount } from "@/lib/testing/api-client";
import { startAppServer, type AppServer } from "@/lib/testing/app-server";
import { labKeyStoreEnv } from "@/lib/testing/lab-key-store-env";
import { rowsAt, type Rows } from "@/lib/testing/rows";
import {
  closeLabKeyStores,
  dynamoKeyItem,
  powertoolsRecord,
  redisKey,
} from "@/lib/testing/lab-key-stores";
import { sendOverlapping } from "@/lib/testing/raw-http";

/**
 * The designs people copy instead of OncePay's, run for real over HTTP:
 * a separate key store on DynamoDB (dynalite, through the AWS SDK), the
 * same on Redis, and Powertools' idempotency utility. What each run leaves
 * is checked where it lives: our tables, the DynamoDB items, the Redis
 * keys and the payment simulator's ledger.
 *
 * On an app of its own, with the shortest key expiry and lease the app
 * accepts, so that the crash scenario waits seconds for them to run out
 * rather than the defaults' 20 and 30; it shares the run's key stores,
 * where every key it leaves is its own account's.
 */
const LAB_KEY_EXPIRY_SECONDS = 5;
const IDEMPOTENCY_LEASE_SECONDS = 5;
let app: AppServer;
let shopper: ApiAccount;
let rows: Rows;
beforeAll(async () => {
  app = await startAppServer({
    env: {
      ...labKeyStoreEnv({ dynamodbUrl: inject("labDynamoDbUrl"), redisUrl: inject("labRedisUrl") }),
      LAB_KEY_EXPIRY_SECONDS: String(LAB_KEY_EXPIRY_SECONDS),
      IDEMPOTENCY_LEASE_SECONDS: String(IDEMPOTENCY_LEASE_SECONDS),
    },
  });
  shopper = await createAccount(app.baseUrl);
  rows = rowsAt(app.databaseUrl);
});
afterAll(async () => {
  await closeLabKeyStores();
  await app?.stop();
});
const COPIED: LabStrategy[] = ["dynamodb_key_store", "redis_key_store", "powertools"];
const MUG = 1800;

async function startRun(body: Record<string, unknown>): Promise<StormReport> {
  const response = await fetch(`${app.baseUrl}/api/lab/storms`, {
    method: "POST",
    headers: { Authorization: `Bearer ${shopper.token}`, "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  expect(response.status).toBe(201);
  return (await response.json()) as StormReport;
}

async function reportOf(id: string): Promise<StormReport> {
  return (await (
    await fetch(`${app.baseUrl}/api/lab/storms/${id}`, {
      headers: { Authorization: `Bearer ${shopper.token}` },
    })
  ).json()) as StormReport;
}

/** Orders in our tables and successful charges in the simulator's ledger, for one run. */
async function recorded(report: StormReport) {
  let metadata: Record<string, string> = { [LAB_STORM_METADATA]: report.id };
  if (report.strategy === "atomic_claim")
    metadata = {
      [PROVIDER_KEY_METADATA]: (await rows.keyRow(shopper.id, report.idempotencyKey!))!
        .provider_key,
    };
  return {
    orders: await rows.ordersForCart(shopper.id, report.cartId),
    charges: (await rows.providerIntents({ metadata })).succeeded,
  };
}

function counted(report: StormReport) {
  if (!report.provider.available) throw new Error(report.provider.detail);
  return { orders: report.orders, charges: report.provider.charges };
}

/** What each store holds for the run's key, in one shape: its state, and the status of the answer it keeps. */
async function keyStoreState(
  strategy: LabStrategy,
  key: string,
): Promise<{ state: string; status?: number }> {
  switch (strategy) {
    case "dynamodb_key_store": {
      const item = await dynamoKeyItem(shopper.id, key);
      return item
        ? { state: item.status as string, status: item.responseStatus as number | undefined }
        : { state: "absent" };
    }
    case "redis_key_store": {
      const { value } = await redisKey(shopper.id, key);
      if (value === null) return { state: "absent" };
      return value === "IN_PROGRESS"
        ? { state: "IN_PROGRESS" }
        : { state: "COMPLETED", status: (JSON.parse(value) as { status: number }).status };
    }
    case "powertools": {
      const record = await powertoolsRecord(shopper.id, key);
      if (!record) return { state: "absent" };
      const state = record.status === "INPROGRESS" ? "IN_PROGRESS" : (record.status as string);
      return state === "COMPLETED"
        ? { state, status: (record.data as { status: number }).status }
        : { state };
    }
    default:
      throw new Error(`${strategy} keeps no key store`);
  }
}

describe.each(COPIED)("%s: a storm of 50 identical requests in flight at once", (strategy) => {
  it("makes one order and one charge; the rest 409 or the stored answer; the key store keeps the 201", async () => {
    const storm = await startRun({ strategy, size: 50 });
    const raw = {
      method: "POST",
      path: storm.request.path,
      headers: { ...storm.request.headers, Authorization: `Bearer ${shopper.token}` },
      body: JSON.stringify(storm.request.body),
    };
    const { responses, lastSentAt } = await sendOverlapping(
      app.baseUrl,
      Array.from({ length: 50 }, () => raw),
    );
    expect(Math.min(...responses.map((response) => response.receivedAt))).toBeGreaterThanOrEqual(
      lastSentAt,
    );

    const report = await reportOf(storm.id);
    // The counts first, in one message, so a failure says what really happened.
    expect({ reported: counted(report), recorded: await recorded(report) }).toEqual({
      reported: { orders: 1, charges: 1 },
      recorded: { orders: 1, charges: 1 },
    });
    expect(report.provider).toMatchObject({ amountCharged: MUG });
    expect(
      responses.filter((response) => response.status !== 201 && response.status !== 409),
    ).toEqual([]);
    expect(
      responses.filter(
        (response) => response.status === 201 && response.headers["idempotent-replayed"] !== "true",
      ),
    ).toHaveLength(1);
    expect(await keyStoreState(strategy, storm.idempotencyKey!)).toEqual({
      state: "COMPLETED",
      status: 201,
    });
  });
});

describe("Powertools' payload validation", () => {
  it("refuses the same key with another body (422), and charges nothing more", async () => {
    const send = (cartId: string, key: string) =>
      fetch(`${app.baseUrl}/api/lab/powertools-orders`, {
        method: "POST",
        headers: {
          Authorization: `Bearer ${shopper.token}`,
          "Content-Type": "application/json",
          "Idempotency-Key": key,
        },
        body: JSON.stringify({ cartId, items: [{ sku: "mug-ceramic-350", quantity: 1 }] }),
      });
    const key = crypto.randomUUID();
    expect((await send("cart-a", key)).status).toBe(201);
    const other = await send("cart-b", key);
    expect(other.status).toBe(422);
    expect(await other.json()).toMatchObject({
      type: "/problems/idempotency-key-reused",
    });
    expect(await rows.ordersForCart(shopper.id, "cart-b")).toBe(0);
  });
});

describe("the crash scenario: the server crashes after the charge, the client retries at once and on past the key's expiry", () => {
  const outcomes = new Map<
    LabStrategy,
    { report: StormReport; observation: CrashObservation; duringRetries?: { state: string } }
  >();

  beforeAll(async () => {
    // Side by side, as the page runs them: each waits out its own key's expiry.
    await Promise.all(
      LAB_STRATEGIES.map(async (strategy) => {
        const started = await startRun({ strategy, kind: "crash" });
        let duringRetries: Promise<{ state: string }> | undefined;
        const observation = await runCrashScenario(
          {
            fetch: (path, init) =>
              fetch(`${app.baseUrl}${path}`, {
                ...init,
                headers: {
                  ...(init.headers as Record<string, string>),
                  Authorization: `Bearer ${shopper.token}`,
                },
              }),
            now: () => performance.now(),
            sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
          },
          { stormId: started.id, request: started.request, crash: started.crash! },
          // Once the retry at once has been answered, look at what the store holds.
          (attempts) => {
            if (attempts.length === 2 && LAB_STRATEGY_INFO[strategy].kind === "copied")
              duringRetries = keyStoreState(strategy, started.idempotencyKey!);
          },
        );
        outcomes.set(strategy, {
          report: await reportOf(started.id),
          observation,
          duringRetries: await duringRetries,
        });
      }),
    );
  }, 120_000);

  it.each(["no_key", "check_then_insert", "claim_after_charge"] as LabStrategy[])(
    "%s: nothing recorded the charge, so the retry at once charges again",
    async (strategy) => {
      const { report, observation } = outcomes.get(strategy)!;
      expect(summarizeRetries(observation.attempts)).toMatchObject({
        atOnce: "201",
        final: "201",
        inProgressMs: null,
      });
      expect(observation.attempts[0]!.label).toBe("network error");
      expect({ reported: counted(report), recorded: await recorded(report) }).toEqual({
        reported: { orders: 1, charges: 2 },
        recorded: { orders: 1, charges: 2 },
      });
    },
  );

  it.each(COPIED)(
    "%s: the key stays IN_PROGRESS (409) until its expiry; then a retry charges again: 2 charges, 1 order",
    async (strategy) => {
      const { report, observation, duringRetries } = outcomes.get(strategy)!;
      const summary = summarizeRetries(observation.attempts);
      expect(observation.attempts[0]!.label).toBe("network error");
      expect(summary).toMatchObject({ atOnce: "409", final: "201" });
      // 409 for about the key's expiry (the first retry came right after the crash).
      const expiryMs = report.crash!.inFlightExpirySeconds! * 1000;
      expect(summary.inProgressMs!).toBeGreaterThanOrEqual(expiryMs - 2000);
      expect(summary.inProgressMs!).toBeLessThan(expiryMs + 5000);
      expect(duringRetries).toEqual({ state: "IN_PROGRESS" });
      expect({ reported: counted(report), recorded: await recorded(report) }).toEqual({
        reported: { orders: 1, charges: 2 },
        recorded: { orders: 1, charges: 2 },
      });
      expect(await keyStoreState(strategy, report.idempotencyKey!)).toEqual({
        state: "COMPLETED",
        status: 201,
      });
    },
  );

  it("atomic_claim (OncePay): 409 until the lease runs out; then a retry takes the key over and finishes with the first charge: 1 charge, 1 order", async () => {
    const { report, observation } = outcomes.get("atomic_claim")!;
    const summary = summarizeRetries(observation.attempts);
    expect(observation.attempts[0]!.label).toBe("500");
    expect(summary).toMatchObject({ atOnce: "409", final: "201" });
    expect(summary.inProgressMs!).toBeGreaterThanOrEqual(
      report.crash!.inFlightExpirySeconds! * 1000 - 2000,
    );
    expect({ reported: counted(report), recorded: await recorded(report) }).toEqual({
      reported: { orders: 1, charges: 1 },
      recorded: { orders: 1, charges: 1 },
    });
    expect(await rows.keyRow(shopper.id, report.idempotencyKey!)).toMatchObject({
      state: "complete",
      response_status: 201,
    });
  });

  it("reports the expiry the app is configured with: the lab's key expiry for the copied designs, the lease for OncePay", () => {
    expect(outcomes.get("powertools")!.report.crash!.inFlightExpirySeconds).toBe(
      LAB_KEY_EXPIRY_SECONDS,
    );
    expect(outcomes.get("atomic_claim")!.report.crash!.inFlightExpirySeconds).toBe(
      IDEMPOTENCY_LEASE_SECONDS,
    );
    expect(outcomes.get("no_key")!.report.crash!.inFlightExpirySeconds).toBeNull();
    expect(inject("labRedisUrl")).toMatch(/^redis:\/\//);
  });
});
