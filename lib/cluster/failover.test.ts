import { afterAll, beforeAll, expect, it } from "vitest";
import { startCluster, type Cluster } from "@/lib/cluster/cluster";
import { newAdminKey } from "@/lib/payments/simulator/admin-key";
import { createFreshPostgresDatabase } from "@/lib/testing/database";
import {
  checkoutsAcrossFailure,
  exactlyOnceViolations,
  unexpectedAnswers,
} from "@/lib/testing/failover";
import { describeOnServer } from "@/lib/testing/postgres-server-only";

/**
 * Exactly once when the database's primary dies: the app's PostgreSQL is
 * three nodes under Patroni with synchronous replication, reached through
 * PgBouncer and the balancer's check of Patroni's /primary; the payment
 * simulator's ledger lives on another server and does not fail over. The
 * test kills the primary while checkouts with distinct keys are in flight at
 * every recovery point, lets the clients retry as the contract asks, and
 * then reads the records: each key one order, one succeeded charge per key,
 * none without an order, and no answer outside the contract on the way.
 */
const CHECKOUTS = 100;

let simulatorDatabase: { url: string; drop(): Promise<void> };
let cluster: Cluster;

describeOnServer(
  "replication",
  "failover: the primary of a Patroni cluster killed under load",
  () => {
    beforeAll(async () => {
      simulatorDatabase = await createFreshPostgresDatabase();
      cluster = await startReplicatedCluster(simulatorDatabase.url);
    }, 240_000);

    afterAll(async () => {
      await cluster?.stop();
      await simulatorDatabase?.drop();
    });

    it(`SIGKILL of the primary with ${CHECKOUTS} checkouts in flight: each key one order and one charge, no charge without an order, and every answer a 201, 409 or 503 with Retry-After`, async () => {
      const primary = await cluster.replicated!.leader();
      const run = await checkoutsAcrossFailure({
        cluster,
        checkouts: CHECKOUTS,
        providerLatencyMs: 1500,
        arrivalGapMs: 50,
        failWhen: ({ points }) =>
          (points.finished ?? 0) >= 5 && (points.payment_started ?? 0) >= 20,
        fail: () => primary.kill(),
      });

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
  },
);

async function startReplicatedCluster(simulatorDatabaseUrl: string) {
  return startCluster({
    size: 2,
    databaseUrl: simulatorDatabaseUrl,
    replicated: { synchronous: true },
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
}
