import { randomUUID } from "node:crypto";
import pg from "pg";
import { setTimeout as delay } from "node:timers/promises";
import type { Cluster } from "@/lib/cluster/cluster";
import { isDatabaseUnavailable } from "@oncepay/idempotency";
import { cartBody, createAccount, type ApiAccount } from "@/lib/testing/api-client";
import { setFaults } from "@/lib/testing/payment-simulator";
import {
  ATTEMPT_TIMEOUT_MS,
  checkoutUntilAnswered,
  type AttemptRecord,
  type CheckoutRun,
} from "@/lib/testing/retrying-checkout";
import { rowsAt } from "@/lib/testing/rows";

/**
 * Checkouts driven across a failure of the app's replicated database, and
 * what must hold afterwards, read from the records: the app's tables on
 * whichever node leads now, and the payment simulator's ledger, which does
 * not fail over with them (it stands for Stripe).
 */
export interface FailoverRun {
  account: ApiAccount;
  runs: CheckoutRun[];
  /** How many keys were at each recovery point just before the failure. */
  pointsBefore: Record<string, number>;
  /** When the failure was made. */
  failedAt: number;
}

export interface FailoverScenario {
  cluster: Cluster;
  checkouts: number;
  /** The payment simulator's latency: keeps many checkouts at the provider when the failure comes. */
  providerLatencyMs: number;
  /** Between two arrivals: spread, so the failure finds keys at every recovery point and more arrive during it. */
  arrivalGapMs: number;
  /** When to fail, given how many checkouts were sent and how many keys are at each point. */
  failWhen(progress: { sent: number; points: Record<string, number> }): boolean;
  fail(): Promise<void>;
}

export async function checkoutsAcrossFailure(scenario: FailoverScenario): Promise<FailoverRun> {
  const { cluster } = scenario;
  await setFaults(cluster.simulator, { latencyMs: scenario.providerLatencyMs });
  const account = await createAccount(cluster.url);
  const app = rowsAt(cluster.databaseUrl);
  let sent = 0;
  const pending = Array.from({ length: scenario.checkouts }, async (_, index) => {
    await delay(index * scenario.arrivalGapMs);
    sent++;
    return checkoutUntilAnswered({
      baseUrl: cluster.url,
      token: account.token,
      key: randomUUID(),
      body: cartBody(),
      deadlineMs: 120_000,
    });
  });
  let pointsBefore: Record<string, number> = {};
  const deadline = Date.now() + 30_000;
  for (;;) {
    // Unanswered while the database struggles (the withheld scenario): no progress to see.
    const points = await app.recoveryPointsOf(account.id).catch(() => undefined);
    if (points) pointsBefore = countBy(points);
    if (scenario.failWhen({ sent, points: pointsBefore })) break;
    if (Date.now() > deadline)
      throw new Error(`The checkouts never reached ${JSON.stringify(pointsBefore)}`);
    await delay(50);
  }
  const failedAt = Date.now();
  await scenario.fail();
  const runs = await Promise.all(pending);
  return { account, runs, pointsBefore, failedAt };
}

/** What happened while the standbys got nothing. */
export interface StallFacts {
  /** Charges at the provider once the requests sent before the stall have surely arrived. */
  chargesHalfway: number;
  /** Commits waiting for a standby, halfway, whose wait was then cancelled. */
  waitsCancelled: number;
  /** Charges at the provider when the primary was killed. */
  chargesAtKill: number;
}

/**
 * The primary stops sending its WAL (its WAL senders stopped: a network
 * that stalls between it and its standbys) and goes on alone for
 * `stallMs`; then it dies, and the standbys elect a new one. With
 * synchronous replication every durable commit waits meanwhile, so no
 * `payment_started` commits and nothing new may reach the provider. Halfway,
 * every waiting commit has its wait cancelled (pg_cancel_backend, as an
 * operator or a client's cancel request would): PostgreSQL then reports it
 * as a success with a warning, and a store that took it for durable would
 * charge. A charge made in the stall's second half (past the provider's
 * latency) was asked for after a commit no standby holds.
 */
export async function withholdReplicationThenKillPrimary(
  cluster: Cluster,
  simulatorDatabaseUrl: string,
  stallMs: number,
): Promise<StallFacts> {
  const replicated = cluster.replicated!;
  const primary = await replicated.leader();
  const charges = async () =>
    (await rowsAt(simulatorDatabaseUrl).providerIntents({ keyPrefix: "oncepay:" })).total;
  await primary.withholdReplication();
  await delay(stallMs / 2);
  const chargesHalfway = await charges();
  const waitsCancelled = await cancelReplicationWaits(primary.url);
  await delay(stallMs / 2);
  const chargesAtKill = await charges();
  await primary.kill();
  return { chargesHalfway, waitsCancelled, chargesAtKill };
}

async function cancelReplicationWaits(primaryUrl: string): Promise<number> {
  const client = new pg.Client({ connectionString: primaryUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ cancelled: number }>(
      `SELECT count(*) FILTER (WHERE pg_cancel_backend(pid))::int AS cancelled
         FROM pg_stat_activity WHERE wait_event = 'SyncRep'`,
    );
    return rows[0]!.cancelled;
  } finally {
    await client.end();
  }
}

/**
 * What a durable write straight to a node (not through the balancer) comes
 * to within `waitMs`: committed (acknowledged, with no warning that its wait
 * for the standby was cancelled), refused (an error: a standby's read-only
 * refusal, or the connection ended as the node is demoted), or no answer
 * (it waits for a standby that never acknowledges). It writes a row in the
 * node's `postgres` database, out of the app's way; a transaction that
 * writes no WAL (only `txid_current()`, say) would not wait for a standby at
 * all, and prove nothing.
 */
export async function durableWriteOutcome(
  nodeUrl: string,
  waitMs: number,
): Promise<"committed" | "refused" | "no answer"> {
  const url = new URL(nodeUrl);
  url.pathname = "/postgres";
  const client = new pg.Client({
    connectionString: url.toString(),
    connectionTimeoutMillis: waitMs,
  });
  client.on("error", () => undefined);
  let cancelledWait = false;
  client.on("notice", (notice) => {
    if (/wait for synchronous replication/i.test(notice.message ?? "")) cancelledWait = true;
  });
  try {
    await client.connect();
    return await Promise.race([
      client
        .query(
          `CREATE TABLE IF NOT EXISTS failover_probe (written_at timestamptz);
           INSERT INTO failover_probe VALUES (now())`,
        )
        .then(
          () => (cancelledWait ? ("refused" as const) : ("committed" as const)),
          () => "refused" as const,
        ),
      delay(waitMs).then(() => "no answer" as const),
    ]);
  } catch {
    return "refused";
  } finally {
    void client.end().catch(() => undefined);
  }
}

/**
 * Every answer a client got is one the contract lets it act on: a 201 (new
 * or replayed), or a 409 or 503 in problem+json with Retry-After. Never a
 * 500, never a hang past the client's timeout. Returns what broke the rule.
 */
export function unexpectedAnswers(runs: readonly CheckoutRun[]): string[] {
  const problems: string[] = [];
  for (const run of runs)
    for (const attempt of run.attempts) {
      const problem = problemWith(attempt);
      if (problem) problems.push(`key ${run.key}: ${problem}`);
    }
  return problems;
}

function problemWith(attempt: AttemptRecord): string | undefined {
  // A connection dropped before any answer (a keep-alive connection the
  // balancer closed as the request went out) is retried like a 502; only a
  // wait as long as the client's patience is a hang.
  if (attempt.status === null)
    return attempt.answeredAt - attempt.sentAt >= ATTEMPT_TIMEOUT_MS
      ? `no answer within the client's timeout (${ATTEMPT_TIMEOUT_MS} ms)`
      : undefined;
  if (attempt.status === 201) return undefined;
  if (attempt.status !== 409 && attempt.status !== 503) return `answered ${attempt.status}`;
  if (attempt.contentType !== "application/problem+json")
    return `${attempt.status} as ${attempt.contentType}`;
  if (!(Number(attempt.retryAfter) > 0)) return `${attempt.status} without Retry-After`;
  return undefined;
}

/**
 * The guarantee, from the records once every key has settled: each key one
 * order, and it is the order every 201 the client got for the key named (an
 * acknowledged answer never vanishes); at the provider, one succeeded
 * charge per key and none without an order. Returns each violation (empty
 * when it holds).
 */
export async function exactlyOnceViolations(
  cluster: Cluster,
  simulatorDatabaseUrl: string,
  run: FailoverRun,
): Promise<string[]> {
  const app = rowsAt(cluster.databaseUrl);
  const ledger = rowsAt(simulatorDatabaseUrl);
  const { ordersByKey, orderIds, paid } = await readWhileSettling(async () => ({
    ordersByKey: await app.ordersByKey(run.account.id),
    orderIds: new Set((await app.ordersOf(run.account.id)).map((order) => order.id)),
    paid: await app.paidProviderKeys(run.account.id),
  }));
  const charges = await ledger.chargesByProviderKey(`oncepay:${run.account.id}:`);
  const violations: string[] = [];
  for (const { key } of run.runs) {
    const orders = ordersByKey.get(key) ?? 0;
    if (orders !== 1) violations.push(`key ${key}: ${orders} orders`);
  }
  for (const { key, attempts } of run.runs)
    for (const { orderId } of attempts)
      if (orderId !== null && !orderIds.has(orderId))
        violations.push(`key ${key}: answered 201 with order ${orderId}, which is not recorded`);
  for (const [providerKey, count] of charges) {
    if (count !== 1) violations.push(`provider key ${providerKey}: ${count} succeeded charges`);
    if (!paid.has(providerKey))
      violations.push(`provider key ${providerKey}: charged, and no order was paid by it`);
  }
  if (charges.size !== run.runs.length)
    violations.push(`${charges.size} charged provider keys for ${run.runs.length} keys`);
  return violations;
}

function countBy(values: readonly string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const value of values) counts[value] = (counts[value] ?? 0) + 1;
  return counts;
}

/** Tries of a read through the cluster's balancer, a quarter second apart. */
const SETTLING_READS = 40;

/**
 * A read of the app's tables through the cluster's balancer, once the
 * checkouts are answered. The cluster may still be settling: the balancer
 * accepts a connection, then closes it while it has no leader to send it
 * to ("Connection terminated unexpectedly", seen under load). A read
 * changes nothing, so it is tried again.
 */
async function readWhileSettling<T>(read: () => Promise<T>): Promise<T> {
  for (let tried = 1; ; tried++) {
    try {
      return await read();
    } catch (error) {
      if (!isDatabaseUnavailable(error) || tried >= SETTLING_READS) throw error;
      await delay(250);
    }
  }
}
