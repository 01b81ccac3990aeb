import { randomUUID } from "node:crypto";
import { readFile } from "node:fs/promises";
import http2 from "node:http2";
import { setTimeout as delay } from "node:timers/promises";
import pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startCluster, type Cluster } from "@/lib/cluster/cluster";
import { newAdminKey } from "@/lib/payments/simulator/admin-key";
import { reportAnswer } from "@/lib/testing/answer-observers";
import { cartBody, createAccount, postOrder } from "@/lib/testing/api-client";
import { setFaults } from "@/lib/testing/payment-simulator";
import { closeTestDb, createFreshPostgresDatabase } from "@/lib/testing/database";
import { judgeAnswersOf } from "@/lib/testing/judged-apps";
import { sample, total } from "@/lib/observability/prometheus-text";
import { checkoutUntilAnswered, type AttemptRecord } from "@/lib/testing/retrying-checkout";
import { METRICS_DOT_SEGMENT_SPELLINGS } from "@/lib/testing/bad-input-corpus";
import { postFrom, sendWire } from "@/lib/testing/raw-http";
import { rowsIn, type Rows } from "@/lib/testing/rows";
import { describeOnServer } from "@/lib/testing/postgres-server-only";
import { startOutageProxy, type OutageProxy } from "@/lib/testing/tcp-proxy";

/**
 * The production shape, on real PostgreSQL: three instances behind HAProxy,
 * PgBouncer in transaction mode in front of PostgreSQL. Every request goes
 * through the balancer, as a shopper's would; the database and the payment
 * simulator's ledger say what happened.
 *
 * CLUSTER_TEST_SCALE shrinks the storm and the kill (the defaults are the
 * full sizes, which CI runs); the instances use a 3 s lease and a recovery
 * worker every second, so what a dead instance leaves behind is finished in
 * seconds rather than a minute.
 */
const SCALE = Number(process.env.CLUSTER_TEST_SCALE ?? 1);
const STORM_SIZE = Math.round(300 * SCALE);
const KILL_CHECKOUTS = Math.round(100 * SCALE);
const ACCOUNTS_PER_ADDRESS = 30;

let database: { url: string; drop(): Promise<void> };
let cluster: Cluster;
// Between the instances and the payment simulator, so a test can take the provider away.
let providerLink: OutageProxy;
let pool: pg.Pool;
let rows: Rows;

describeOnServer(
  "pooler",
  "the cluster: three instances behind HAProxy, PgBouncer in front of PostgreSQL",
  () => {
    beforeAll(async () => {
      // A database of its own: the shared test app's rows and rate-limit
      // windows (its callers share 127.0.0.1 with the balancer's) stay apart.
      database = await createFreshPostgresDatabase();
      cluster = await startCluster({
        size: 3,
        databaseUrl: database.url,
        port: 0,
        poolerPoolSize: 10,
        instancePoolMax: 10,
        simulatorAdminKey: newAdminKey(),
        output: "keep",
        providerUrl: async (simulatorUrl) =>
          (providerLink = await startOutageProxy(simulatorUrl)).url,
        instanceEnv: {
          LOG_LEVEL: "info",
          IDEMPOTENCY_LEASE_SECONDS: "3",
          RECOVERY_INTERVAL_SECONDS: "1",
          REAPER_INTERVAL_SECONDS: "0",
          ACCOUNT_RATE_LIMIT: String(ACCOUNTS_PER_ADDRESS),
        },
      });
      // The balancer answers for the app (its own 502, 503 and 504 too), and each instance for itself.
      judgeAnswersOf(cluster.url, ...cluster.instances.map((instance) => instance.url));
      pool = new pg.Pool({ connectionString: database.url, max: 3 });
      // pool.end() resolves before its connections have closed, and the
      // DROP … WITH (FORCE) after it ends the stragglers with an error; a
      // pool with no listener for it throws, failing a lane whose tests passed.
      pool.on("error", () => undefined);
      rows = rowsIn(pool);
    }, 180_000);

    afterAll(async () => {
      await setFaults(cluster?.simulator ?? { url: "http://127.0.0.1:1" }, {}).catch(
        () => undefined,
      );
      await cluster?.stop();
      await providerLink?.close();
      await pool?.end();
      await database?.drop();
      await closeTestDb();
    });

    it(`${STORM_SIZE} identical requests under one key, spread over every instance: one order, one charge, the rest 409 or the replay`, async () => {
      // A slow card network keeps the first attempt on the key while the rest arrive.
      await setFaults(cluster.simulator, { latencyMs: 1000 });
      const before = await scrapeEach(cluster);
      const account = await createAccount(cluster.url);
      const key = randomUUID();
      const body = cartBody();

      const answers = await Promise.all(
        Array.from({ length: STORM_SIZE }, () => sendOnce(cluster.url, account.token, key, body)),
      );

      for (const answer of answers) {
        expect([409, 201]).toContain(answer.status);
        if (answer.status === 409) expect(Number(answer.retryAfter)).toBeGreaterThan(0);
      }
      // The key's result, asked for until it is final: the one order, replayed.
      const settled = await checkoutUntilAnswered({
        baseUrl: cluster.url,
        token: account.token,
        key,
        body,
        deadlineMs: 60_000,
      });
      expect(settled.final).toMatchObject({ status: 201, replayed: true });
      for (const answer of answers.filter((answer) => answer.status === 201))
        expect(answer.orderId).toBe(settled.final!.orderId);
      // One fresh 201: the first attempt's. Unless that attempt outlived its
      // 3 s lease (a machine loaded enough; seen: all 300 answered 409), a
      // recovery worker finished the key, and the attempt was answered 409
      // for the lease it lost: then none, and the worker's log says so.
      const created = answers.filter((answer) => answer.status === 201 && !answer.replayed);
      const completedByRecovery = cluster.instances.some((instance) =>
        recoveryLines(cluster, instance.name).some(
          (line) => line.idempotencyKey === key && line.result === "completed",
        ),
      );
      expect(created, statusesOf(answers)).toHaveLength(completedByRecovery ? 0 : 1);
      // All of them were on the wire before any was told the result.
      const firstPaid = Math.min(
        ...answers.filter((answer) => answer.status === 201).map((answer) => answer.answeredAt),
      );
      expect(Math.max(...answers.map((answer) => answer.sentAt))).toBeLessThan(firstPaid);

      expect(await rows.rowCounts(account.id)).toEqual({ orders: 1, payments: 1 });
      expect(await rows.providerIntents({ keyPrefix: `oncepay:${account.id}:` })).toMatchObject({
        succeeded: 1,
        total: 1,
      });

      // Round-robin: every instance answered part of the storm, and together all of it.
      const after = await scrapeEach(cluster);
      const served = after.map(
        (text, index) =>
          total(text, "oncepay_checkout_outcomes_total") -
          total(before[index]!, "oncepay_checkout_outcomes_total"),
      );
      for (const count of served) expect(count).toBeGreaterThan(0);
      expect(served.reduce((sum, count) => sum + count, 0)).toBe(
        STORM_SIZE + settled.attempts.length,
      );
      const createdCounted = after.reduce(
        (sum, text, index) =>
          sum +
          total(text, "oncepay_checkout_outcomes_total", { outcome: "created" }) -
          total(before[index]!, "oncepay_checkout_outcomes_total", { outcome: "created" }),
        0,
      );
      expect(createdCounted).toBe(created.length);
    }, 60_000);

    it("a request that waits (Prefer: wait) on one instance is woken by the first attempt's commit on another, and gets its answer", async () => {
      // A slow card network keeps the first attempt on the key while the waiters arrive.
      await setFaults(cluster.simulator, { latencyMs: 1500 });
      try {
        const account = await createAccount(cluster.url);
        const key = randomUUID();
        const body = cartBody();
        const [first, second, third] = cluster.instances.map((instance) => instance.url);
        const firstAttempt = postOrder({ baseUrl: first, token: account.token, key, body }).then(
          (answer) => ({ ...answer, answeredAt: Date.now() }),
        );
        await expect
          .poll(
            async () =>
              (await pool.query(`SELECT 1 FROM idempotency_keys WHERE idem_key = $1`, [key]))
                .rowCount,
          )
          .toBe(1);
        const waiters = [second, third].map((url) =>
          postOrder({
            baseUrl: url,
            token: account.token,
            key,
            body,
            headers: { Prefer: "wait=10" },
          }).then((answer) => ({ ...answer, answeredAt: Date.now() })),
        );
        const answered = await firstAttempt;
        expect(answered.response.status).toBe(201);
        for (const waiter of await Promise.all(waiters)) {
          expect(waiter.response.status).toBe(201);
          expect(waiter.response.headers.get("idempotent-replayed")).toBe("true");
          expect(waiter.response.headers.get("preference-applied")).toBe("wait=10");
          expect(waiter.text).toBe(answered.text);
          // Woken by the commit, seconds before its deadline.
          expect(waiter.answeredAt - answered.answeredAt).toBeLessThan(2_000);
        }
        expect(await rows.rowCounts(account.id)).toEqual({ orders: 1, payments: 1 });
      } finally {
        await setFaults(cluster.simulator, {});
      }
    });

    it(`SIGKILL one instance with ${KILL_CHECKOUTS} checkouts in flight: each key one order and one charge, and the dead instance's keys are finished by the others' recovery workers, each once`, async () => {
      await setFaults(cluster.simulator, { latencyMs: 1500 });
      const account = await createAccount(cluster.url);
      const victim = cluster.instances[1]!;
      const survivors = cluster.instances.filter((instance) => instance !== victim);
      const recoveryLinesBefore = new Map(
        survivors.map((instance) => [instance.name, recoveryLines(cluster, instance.name).length]),
      );

      const runs = Array.from({ length: KILL_CHECKOUTS }, () =>
        checkoutUntilAnswered({
          baseUrl: cluster.url,
          token: account.token,
          key: randomUUID(),
          body: cartBody(),
          deadlineMs: 60_000,
          // A client whose attempt died with its instance comes back late:
          // by then the recovery workers have finished its key.
          waitBeforeRetry: (last) => (last.status === 502 || last.status === null ? 8000 : 500),
        }),
      );
      // Kill once the charges are under way: every key is at the provider.
      await waitFor(
        async () => (await keysAt(account.id, "payment_started")) >= KILL_CHECKOUTS * 0.9,
        20_000,
      );
      await victim.process.kill();
      const results = await Promise.all(runs);

      for (const run of results)
        expect(run.final?.status, `key ${run.key}: ${describeAttempts(run.attempts)}`).toBe(201);
      const ordersByKey = await rows.ordersByKey(account.id);
      const chargesByKey = await rows.chargesByProviderKey(`oncepay:${account.id}:`);
      expect(ordersByKey.size).toBe(KILL_CHECKOUTS);
      for (const run of results) expect(ordersByKey.get(run.key)).toBe(1);
      expect(chargesByKey.size).toBe(KILL_CHECKOUTS);
      for (const count of chargesByKey.values()) expect(count).toBe(1);

      // The keys whose first attempt died with the instance (the balancer answered 502).
      const orphaned = results
        .filter((run) => run.attempts[0]!.status === 502 || run.attempts[0]!.status === null)
        .map((run) => run.key);
      expect(orphaned.length).toBeGreaterThan(0);
      // Each was taken over by at most one survivor's worker (no leader, no
      // duplicate work). One whose charge had begun was finished by it, and
      // the client's late retry was a replay; one the instance died with
      // still at `claimed` (the kill comes once 90% have begun) was released,
      // nothing charged, and the retry paid. A key no worker reached before
      // the client came back (the instance never claimed it, or, on a busy
      // machine, the workers were still resuming others: seen once in CI)
      // the retry finished itself, as its first answer.
      const recovered = survivors.flatMap((instance) =>
        recoveryLines(cluster, instance.name).slice(recoveryLinesBefore.get(instance.name)),
      );
      const recoveryResults = new Map<string, string>();
      for (const key of orphaned) {
        const lines = recovered.filter((line) => line.idempotencyKey === key);
        expect(lines.length, `recovery of ${key}`).toBeLessThanOrEqual(1);
        if (lines.length === 0) {
          expect(results.find((run) => run.key === key)!.final!.replayed).toBe(false);
          continue;
        }
        const result = lines[0]!.result;
        expect(["completed", "released"]).toContain(result);
        expect(results.find((run) => run.key === key)!.final!.replayed).toBe(
          result === "completed",
        );
        recoveryResults.set(key, result);
      }
      expect(
        [...recoveryResults.values()].filter((result) => result === "completed").length,
      ).toBeGreaterThan(0);
    }, 120_000);

    it("PgBouncer killed for four seconds: 503 with Retry-After while it is gone, then every checkout completes, charged once", async () => {
      await setFaults(cluster.simulator, { latencyMs: 1000 });
      const account = await createAccount(cluster.url);
      const checkouts = 30;
      const runs = Array.from({ length: checkouts }, () =>
        checkoutUntilAnswered({
          baseUrl: cluster.url,
          token: account.token,
          key: randomUUID(),
          body: cartBody(),
          deadlineMs: 60_000,
        }),
      );
      await waitFor(
        async () => (await keysAt(account.id, "payment_started")) >= checkouts * 0.8,
        20_000,
      );
      const killedAt = Date.now();
      await cluster.pooler.kill();
      await delay(4000);
      const restartedAt = Date.now();
      await cluster.pooler.start();
      const results = await Promise.all(runs);

      const duringOutage = results
        .flatMap((run) => run.attempts)
        .filter((attempt) => attempt.answeredAt > killedAt && attempt.answeredAt < restartedAt);
      expect(duringOutage.length).toBeGreaterThan(0);
      for (const attempt of duringOutage) {
        expect(attempt.status).toBe(503);
        expect(attempt.contentType).toBe("application/problem+json");
        expect(Number(attempt.retryAfter)).toBeGreaterThan(0);
      }
      for (const run of results)
        expect(run.final?.status, `key ${run.key}: ${describeAttempts(run.attempts)}`).toBe(201);
      const ordersByKey = await rows.ordersByKey(account.id);
      for (const run of results) expect(ordersByKey.get(run.key)).toBe(1);
      const chargesByKey = await rows.chargesByProviderKey(`oncepay:${account.id}:`);
      expect([...chargesByKey.values()]).toEqual(Array(checkouts).fill(1));
    }, 120_000);

    it("the payment provider unreachable: the balancer keeps every instance, a completed key replays its 201 through it, the order reads back, and a new checkout gets 503 with Retry-After", async () => {
      await setFaults(cluster.simulator, {});
      const account = await createAccount(cluster.url);
      const paidKey = randomUUID();
      const paidBody = cartBody();
      const paid = await postOrder({
        baseUrl: cluster.url,
        token: account.token,
        key: paidKey,
        body: paidBody,
      });
      expect(paid.response.status).toBe(201);
      const orderId = (JSON.parse(paid.text) as { id: string }).id;

      // The instance killed by an earlier test stays out; the others are in.
      const inRotation = await activeServers(cluster);
      expect(inRotation).toBeGreaterThan(0);

      await providerLink.cut();
      try {
        // Long past what the balancer needs to take an instance out (two
        // failed checks a second apart), had readiness asked the provider.
        await delay(4000);
        // None taken out for it (one still coming back from an earlier test may rejoin).
        expect(await activeServers(cluster)).toBeGreaterThanOrEqual(inRotation);
        expect((await fetch(`${cluster.url}/api/ready`)).status).toBe(200);

        // Round-robin: as many replays as instances in rotation reach every one of them.
        for (let replays = 0; replays < inRotation; replays++) {
          const replay = await sendOnce(cluster.url, account.token, paidKey, paidBody);
          expect(replay.status).toBe(201);
          expect(replay.replayed).toBe(true);
        }
        const order = await fetch(`${cluster.url}/api/orders/${orderId}`, {
          headers: { Authorization: `Bearer ${account.token}` },
        });
        expect(order.status).toBe(200);

        const { response, text } = await postOrder({
          baseUrl: cluster.url,
          token: account.token,
          key: randomUUID(),
        });
        expect(response.status).toBe(503);
        expect(response.headers.get("content-type")).toBe("application/problem+json");
        expect(Number(response.headers.get("retry-after"))).toBeGreaterThan(0);
        // The instance's own answer, not the balancer's "no instance is ready".
        expect(JSON.parse(text)).toMatchObject({
          type: "/problems/dependency-unavailable",
        });
        // None taken out for it (one still coming back from an earlier test may rejoin).
        expect(await activeServers(cluster)).toBeGreaterThanOrEqual(inRotation);
      } finally {
        await providerLink.restore();
      }
    }, 60_000);

    it("limits accounts per address across all instances, whatever X-Forwarded-For the caller forges", async () => {
      // Another loopback address is another client to the balancer.
      const statuses: number[] = [];
      for (let index = 0; index < ACCOUNTS_PER_ADDRESS; index++) {
        statuses.push(
          (
            await postFrom("127.0.0.2", `${cluster.url}/api/accounts`, {
              "X-Forwarded-For": `10.9.${index}.1`,
            })
          ).status,
        );
      }
      expect(statuses).toEqual(Array(ACCOUNTS_PER_ADDRESS).fill(201));
      const refused = await postFrom("127.0.0.2", `${cluster.url}/api/accounts`, {
        "X-Forwarded-For": "10.9.99.1",
      });
      expect(refused.status).toBe(429);
      expect(refused.headers["content-type"]).toBe("application/problem+json");
      expect(Number(refused.headers["retry-after"])).toBeGreaterThan(0);
      expect(JSON.parse(refused.body)).toMatchObject({
        type: "/problems/rate-limited",
        status: 429,
      });
      expect((await postFrom("127.0.0.3", `${cluster.url}/api/accounts`, {})).status).toBe(201);
    }, 60_000);

    it("serves /api/health and /api/ready through the balancer, and keeps /api/metrics to the instances", async () => {
      expect(await (await fetch(`${cluster.url}/api/health`)).json()).toEqual({ status: "ok" });
      const ready = await fetch(`${cluster.url}/api/ready`);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toMatchObject({
        status: "ready",
        checks: { database: { ok: true } },
      });
      const metrics = await fetch(`${cluster.url}/api/metrics`);
      expect(metrics.status).toBe(404);
      expect(metrics.headers.get("content-type")).toBe("application/problem+json");
      const instance = cluster.instances[0]!;
      const text = await (await fetch(`${instance.url}/api/metrics`)).text();
      expect(total(text, "oncepay_checkout_outcomes_total")).toBeGreaterThan(0);
      expect(text).toContain("process_cpu_seconds_total");
    });

    it("keeps /api/metrics to the instances however its path is spelt, and answers request lines no browser sends", async () => {
      const balancerHost = new URL(cluster.url).host;
      const spellings = [
        ...METRICS_DOT_SEGMENT_SPELLINGS,
        `http://${balancerHost}/x/../api/metrics`,
        "/api/metrics?x=1",
        "/api/metrics/",
        "//api/metrics",
      ];
      for (const path of spellings) {
        const answer = await sendWire(cluster.url, { method: "GET", path, headers: [] });
        expect(answer.status, path).not.toBe(200);
        expect(answer.body, path).not.toContain("oncepay_checkout_outcomes_total");
        if (answer.status === 308) expect(answer.headers.location, path).toBe("/api/metrics");
        else expect(answer.headers["content-type"], path).toBe("application/problem+json");
      }
      // An instance refuses a dot segment too, so that what the balancer
      // checked is the path the app routes.
      const instance = cluster.instances[0]!;
      for (const path of METRICS_DOT_SEGMENT_SPELLINGS) {
        const answer = await sendWire(instance.url, { method: "GET", path, headers: [] });
        expect(answer.status, path).toBe(400);
        expect(JSON.parse(answer.body), path).toMatchObject({
          type: "/problems/malformed-path",
        });
      }

      // HAProxy passed OPTIONS * on, and the app answered 500; an Upgrade got a 502.
      const options = await sendWire(cluster.url, { method: "OPTIONS", path: "*", headers: [] });
      expect(options.status).toBe(204);
      expect(options.headers.allow).toBe("GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS");
      const upgrade = await sendWire(cluster.url, {
        method: "GET",
        path: "/api/health",
        headers: [
          ["Connection", "Upgrade, HTTP2-Settings, close"],
          ["Upgrade", "h2c"],
          ["HTTP2-Settings", "AAMAAABkAAQCAAAAAAIAAAAA"],
        ],
      });
      expect(upgrade.status).toBe(200);
    });

    it("serves the shop over HTTPS and HTTP/2 with the certificate made at start, and tells the app the scheme, whatever a client claims", async () => {
      const ca = await readFile(cluster.certificate.certFile, "utf8");
      const session = http2.connect(cluster.tlsUrl, { ca });
      try {
        const health = await http2Get(session, "/api/health");
        expect(session.alpnProtocol).toBe("h2");
        expect(health).toMatchObject({ status: 200, body: JSON.stringify({ status: "ok" }) });
        // Over HTTPS the session cookie is Secure.
        const page = await http2Get(session, "/");
        expect(String(page.headers["set-cookie"])).toMatch(/;\s*Secure/i);
      } finally {
        session.close();
      }
      // Over plain HTTP a client's own X-Forwarded-Proto is replaced, not believed.
      const page = await fetch(`${cluster.url}/`, { headers: { "X-Forwarded-Proto": "https" } });
      expect(page.headers.get("set-cookie")).not.toMatch(/;\s*Secure/i);
    });

    it("compresses pages at the balancer, while an instance sends them as they are", async () => {
      const acceptsGzip = { headers: { "Accept-Encoding": "gzip" } };
      const throughBalancer = await fetch(`${cluster.url}/`, acceptsGzip);
      expect(throughBalancer.headers.get("content-encoding")).toBe("gzip");
      expect(await throughBalancer.text()).toContain("</html>");
      const fromInstance = await fetch(`${cluster.instances[0]!.url}/`, acceptsGzip);
      expect(fromInstance.headers.get("content-encoding")).toBeNull();
      expect(await fromInstance.text()).toContain("</html>");
    });
  },
);

function http2Get(
  session: http2.ClientHttp2Session,
  path: string,
): Promise<{ status: number; headers: http2.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const stream = session.request({ ":path": path });
    let headers: http2.IncomingHttpHeaders = {};
    let body = "";
    stream.on("response", (received) => (headers = received));
    stream.setEncoding("utf8");
    stream.on("data", (chunk: string) => (body += chunk));
    stream.on("end", () => {
      const status = Number(headers[":status"]);
      // Judged as the balancer's answers over HTTP/1.1 are: the same instances serve both.
      const fields = Object.entries(headers).filter(([name]) => !name.startsWith(":"));
      reportAnswer(cluster.url, {
        method: "GET",
        path,
        status,
        headers: Object.fromEntries(fields),
        body,
      });
      resolve({ status, headers, body });
    });
    stream.on("error", reject);
  });
}

/** The instances the balancer has in rotation, by its own Prometheus exporter. */
async function activeServers(running: Cluster): Promise<number> {
  const text = await (await fetch(`${running.balancer.statsUrl}/metrics`)).text();
  const active = sample(text, "haproxy_backend_active_servers", { proxy: "instances" });
  if (active === undefined) throw new Error("HAProxy exported no haproxy_backend_active_servers");
  return active;
}

async function keysAt(accountId: string, recoveryPoint: string): Promise<number> {
  return (await rows.recoveryPointsOf(accountId)).filter((point) => point === recoveryPoint).length;
}

async function sendOnce(
  baseUrl: string,
  token: string,
  key: string,
  body: unknown,
): Promise<AttemptRecord> {
  const run = await checkoutUntilAnswered({
    baseUrl,
    token,
    key,
    body,
    deadlineMs: 0,
    maxAttempts: 1,
  });
  return run.attempts[0]!;
}

/** How many answers had each status ("201 replayed" apart), for a failure's message. */
function statusesOf(answers: readonly AttemptRecord[]): string {
  const counts = new Map<string, number>();
  for (const { status, replayed } of answers) {
    const name = `${status ?? "no answer"}${replayed ? " replayed" : ""}`;
    counts.set(name, (counts.get(name) ?? 0) + 1);
  }
  return `answers: ${[...counts].map(([name, count]) => `${count} × ${name}`).join(", ")}`;
}

async function scrapeEach(running: Cluster): Promise<string[]> {
  return Promise.all(
    running.instances.map(async (instance) => (await fetch(`${instance.url}/api/metrics`)).text()),
  );
}

/** The recovery worker's per-key lines an instance logged, in order. */
function recoveryLines(
  running: Cluster,
  instance: string,
): { idempotencyKey: string; keyId: string; result: string }[] {
  return running
    .output(instance)
    .split("\n")
    .filter((line) => line.includes('"event":"recovery.key"'))
    .map((line) => JSON.parse(line) as { idempotencyKey: string; keyId: string; result: string });
}

async function waitFor(condition: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms`);
    await delay(50);
  }
}

function describeAttempts(attempts: readonly AttemptRecord[]): string {
  return attempts
    .map((attempt) => `${attempt.status ?? "no answer"}${attempt.replayed ? " (replay)" : ""}`)
    .join(", ");
}
