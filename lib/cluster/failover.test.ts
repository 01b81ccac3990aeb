import { randomUUID } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startCluster, type Cluster } from "@/lib/cluster/cluster";
import { judgeAnswersOf } from "@/lib/testing/judged-apps";
import { newAdminKey } from "@/lib/payments/simulator/admin-key";
import { unusedPostgresDatabase } from "@/lib/testing/database";
import { setTimeout as delay } from "node:timers/promises";
import {
  checkoutsAcrossFailure,
  durableWriteOutcome,
  exactlyOnceViolations,
  withholdReplicationThenKillPrimary,
  unexpectedAnswers,
  type StallFacts,
} from "@/lib/testing/failover";
import { describeMoments, watchFailover } from "@/lib/testing/failover-watch";
import { describeOnServer } from "@/lib/testing/postgres-server-only";
import { cartBody, createAccount, postOrder } from "@/lib/testing/api-client";
import { setFaults } from "@/lib/testing/payment-simulator";
import { sample } from "@/lib/observability/prometheus-text";

/**
 * Exactly once when the database's primary dies: the app's PostgreSQL is
 * three nodes under Patroni with synchronous replication, reached through
 * PgBouncer and the balancer's check of Patroni's /primary; the payment
 * simulator's ledger lives on another server and does not fail over. The
 * tests kill the primary while checkouts with distinct keys are in flight at
 * every recovery point (outright, and after its standbys stopped getting
 * its WAL) or freeze it until another node leads and takes commits, let the
 * clients retry as the contract asks, and then read
 * the records: each key one order, the one its 201s named, one succeeded
 * charge per key, none without an order, and no answer outside the contract
 * on the way. The same stall and kill on asynchronous replication must break
 * those rules, and the test says that it does.
 *
 * The simulator's ledger is on a database name the server has never had,
 * as for `CLUSTER_DATABASE=patroni npm run cluster` on a fresh machine:
 * starting the cluster creates it.
 */
const CHECKOUTS = 100;
/** 100 checkouts 50 ms apart: the failure comes while they still arrive. */
const ARRIVING_FAST = { arrivalGapMs: 50, atProvider: 20 };
/** 100 checkouts 100 ms apart: they keep arriving through a 6 s stall. */
const ARRIVING_FOR_10_S = { arrivalGapMs: 100, atProvider: 10 };

let simulatorDatabase: ReturnType<typeof unusedPostgresDatabase>;
let cluster: Cluster;

describeOnServer(
  "replication",
  "failover: the primary of a Patroni cluster killed under load",
  () => {
    beforeAll(async () => {
      simulatorDatabase = unusedPostgresDatabase();
      cluster = await startReplicatedCluster(simulatorDatabase.url);
      expect(await simulatorDatabase.exists()).toBe(true);
    }, 240_000);

    afterAll(async () => {
      await cluster?.stop();
      await simulatorDatabase?.drop();
    });

    it(`SIGKILL of the primary with ${CHECKOUTS} checkouts in flight: each key one order and one charge, no charge without an order, and every answer a 201, 409 or 503 with Retry-After`, async () => {
      const primary = await cluster.replicated!.leader();
      const run = await checkoutsWhile(cluster, ARRIVING_FAST, () => primary.kill());

      expect(unexpectedAnswers(run.runs)).toEqual([]);
      expect(await exactlyOnceViolations(cluster, simulatorDatabase.url, run)).toEqual([]);
      // Some keys were at the provider, some finished, and some arrived during the outage.
      expect(run.pointsBefore.payment_started).toBeGreaterThan(0);
      expect(run.pointsBefore.finished).toBeGreaterThan(0);
      expect(run.runs.some((checkout) => checkout.attempts[0]!.sentAt > run.failedAt)).toBe(true);
      expect((await cluster.replicated!.leader()).name).not.toBe(primary.name);

      // Started again, the old primary rewinds to the new timeline and follows.
      await primary.start();
      await cluster.replicated!.whole();
      expect(await cluster.replicated!.leader()).not.toBe(primary);
    }, 240_000);

    it("a request waiting (Prefer: wait) when the primary dies is answered at once, and once another node leads, a commit wakes a waiter again", async () => {
      const [first, second] = cluster.instances.map((instance) => instance.url) as [string, string];
      const account = await createAccount(cluster.url);
      const body = cartBody();
      const keyRows = new pg.Pool({ connectionString: cluster.databaseUrl, max: 1 });
      keyRows.on("error", () => undefined);
      const claimed = (key: string) =>
        keyRows.query(`SELECT 1 FROM idempotency_keys WHERE idem_key = $1`, [key]).then(
          (result) => result.rowCount,
          () => 0,
        );
      const waitingOn = (url: string) => metricOf(url, "oncepay_key_waiters");
      const send = (url: string, key: string, headers: Record<string, string> = {}) =>
        postOrder({ baseUrl: url, token: account.token, key, body, headers }).then((answer) => ({
          ...answer,
          answeredAt: Date.now(),
        }));
      try {
        // The first attempt sits at a slow provider; the waiter, on another instance, waits for it.
        await setFaults(cluster.simulator, { latencyMs: 5000 });
        const key = randomUUID();
        void send(first, key).catch(() => undefined);
        await expect.poll(() => claimed(key), { timeout: 10_000 }).toBe(1);
        const waiting = send(second, key, { Prefer: "wait=10" });
        await expect.poll(() => waitingOn(second), { timeout: 10_000 }).toBe(1);

        const primary = await cluster.replicated!.leader();
        const killedAt = Date.now();
        await primary.kill();
        const answered = await waiting;
        // Its listener's connection died with the primary: answered now, not at its 10 s deadline.
        expect(answered.response.status).toBe(409);
        expect(answered.response.headers.get("preference-applied")).toBe("wait=10");
        expect(answered.answeredAt - killedAt).toBeLessThan(5_000);

        // Another node leads, the listener follows it, and a commit wakes a waiter again.
        await expect
          .poll(async () => (await cluster.replicated!.leader()).name, { timeout: 60_000 })
          .not.toBe(primary.name);
        await expect
          .poll(() => metricOf(second, "oncepay_key_listener_up"), { timeout: 60_000 })
          .toBe(1);
        await setFaults(cluster.simulator, { latencyMs: 1500 });
        const next = randomUUID();
        const firstAttempt = send(first, next);
        await expect.poll(() => claimed(next), { timeout: 30_000 }).toBe(1);
        const woken = await send(second, next, { Prefer: "wait=10" });
        const paid = await firstAttempt;
        expect(paid.response.status).toBe(201);
        expect(woken.response.status).toBe(201);
        expect(woken.response.headers.get("idempotent-replayed")).toBe("true");
        expect(woken.answeredAt - paid.answeredAt).toBeLessThan(2_000);

        await primary.start();
        await cluster.replicated!.whole();
      } finally {
        await setFaults(cluster.simulator, {});
        await keyRows.end();
      }
    }, 240_000);

    it("the primary frozen until another node leads and takes commits, then resumed: it takes no write, the balancer never counts it up again, and the same invariants hold", async () => {
      const primary = await cluster.replicated!.leader();
      const watch = watchFailover(cluster);
      let thawedAt = 0;
      let directWrite = "";
      const run = await checkoutsWhile(cluster, ARRIVING_FAST, async () => {
        await primary.freeze();
        expect(await cluster.replicated!.leader()).not.toBe(primary);
        // The new primary acknowledges commits (the third node is its
        // synchronous standby, so nothing follows the old one any more)
        // before the old primary wakes up believing it still leads.
        await cluster.replicated!.syncStandby();
        await delay(2000);
        thawedAt = Date.now();
        await primary.thaw();
        directWrite = await durableWriteOutcome(primary.url, 5000);
      });
      const moments = await watch.stop();
      const trace = describeMoments(moments, thawedAt);

      const countedUpAfterThaw = moments.filter(
        (moment) => moment.at >= thawedAt && moment.countedUp.includes(primary.name),
      );
      expect(countedUpAfterThaw, trace).toEqual([]);
      expect(directWrite, trace).not.toBe("committed");
      expect(unexpectedAnswers(run.runs)).toEqual([]);
      expect(await exactlyOnceViolations(cluster, simulatorDatabase.url, run)).toEqual([]);
      // Patroni demotes the old primary by itself, and it follows the new one.
      await cluster.replicated!.whole();
    }, 240_000);

    it("the standbys' acknowledgements withheld, then the primary killed: nothing reaches the provider while they are, and the same invariants hold", async () => {
      const primary = await cluster.replicated!.leader();
      const { run, stall } = await stallAndKill(cluster, simulatorDatabase.url);

      expect(stall.chargesAtKill).toBe(stall.chargesHalfway);
      // The cancelled waits were refused, not taken for durable commits.
      expect(stall.waitsCancelled).toBeGreaterThan(0);
      const logs = cluster.output("app1") + cluster.output("app2");
      expect(logs).toContain("wait for the synchronous standby was cancelled");
      expect(unexpectedAnswers(run.runs)).toEqual([]);
      expect(await exactlyOnceViolations(cluster, simulatorDatabase.url, run)).toEqual([]);
      // Checkouts kept arriving through the stall: their claims committed, their payments waited.
      expect(run.runs.some((checkout) => checkout.attempts[0]!.sentAt > run.failedAt)).toBe(true);

      await primary.start();
      await cluster.replicated!.whole();
    }, 240_000);
  },
);

describeOnServer(
  "replication",
  "failover with asynchronous replication (broken on purpose): the same stall and kill",
  () => {
    let asyncSimulatorDatabase: ReturnType<typeof unusedPostgresDatabase>;
    let asyncCluster: Cluster;

    beforeAll(async () => {
      asyncSimulatorDatabase = unusedPostgresDatabase();
      asyncCluster = await startReplicatedCluster(asyncSimulatorDatabase.url, {
        synchronous: false,
      });
    }, 240_000);

    afterAll(async () => {
      await asyncCluster?.stop();
      await asyncSimulatorDatabase?.drop();
    });

    it("loses acknowledged checkouts and charges while the standbys lag, and the checks say so", async () => {
      const { run, stall } = await stallAndKill(asyncCluster, asyncSimulatorDatabase.url);

      expect(stall.chargesAtKill).toBeGreaterThan(stall.chargesHalfway);
      const violations = await exactlyOnceViolations(asyncCluster, asyncSimulatorDatabase.url, run);
      console.info(
        `asynchronous replication: ${stall.chargesAtKill - stall.chargesHalfway} charges made while the standbys had nothing; ${violations.length} violations, the first: ${violations[0]}`,
      );
      expect(violations.some((violation) => violation.includes("which is not recorded"))).toBe(
        true,
      );
    }, 240_000);
  },
);

/**
 * Checkouts with distinct keys, the provider answering in 1.5 s, and `fail`
 * once some keys are finished and `atProvider` are at the provider.
 */
function checkoutsWhile(
  target: Cluster,
  arrivals: { arrivalGapMs: number; atProvider: number },
  fail: () => Promise<void>,
) {
  return checkoutsAcrossFailure({
    cluster: target,
    checkouts: CHECKOUTS,
    providerLatencyMs: 1500,
    arrivalGapMs: arrivals.arrivalGapMs,
    failWhen: ({ points }) =>
      (points.finished ?? 0) >= 5 && (points.payment_started ?? 0) >= arrivals.atProvider,
    fail,
  });
}

/** The primary's WAL withheld from its standbys for 6 s of the arrivals, then the primary killed. */
async function stallAndKill(target: Cluster, simulatorDatabaseUrl: string) {
  let stall: StallFacts | undefined;
  const run = await checkoutsWhile(target, ARRIVING_FOR_10_S, async () => {
    stall = await withholdReplicationThenKillPrimary(target, simulatorDatabaseUrl, 6000);
  });
  return { run, stall: stall! };
}

async function startReplicatedCluster(
  simulatorDatabaseUrl: string,
  replicated = { synchronous: true },
) {
  const cluster = await startCluster({
    size: 2,
    databaseUrl: simulatorDatabaseUrl,
    replicated,
    port: 0,
    poolerPoolSize: 10,
    instancePoolMax: 10,
    simulatorAdminKey: newAdminKey(),
    output: "keep",
    instanceEnv: {
      LOG_LEVEL: "info",
      IDEMPOTENCY_LEASE_SECONDS: "3",
      RECOVERY_INTERVAL_SECONDS: "1",
      REAPER_INTERVAL_SECONDS: "0",
    },
  });
  // The balancer answers for the app (its own 502, 503 and 504 too), and each instance for itself.
  judgeAnswersOf(cluster.url, ...cluster.instances.map((instance) => instance.url));
  return cluster;
}

/** One instance's metric, as its /api/metrics says now. */
async function metricOf(instanceUrl: string, name: string): Promise<number | undefined> {
  const text = await (await fetch(`${instanceUrl}/api/metrics`)).text();
  return sample(text, name);
}
