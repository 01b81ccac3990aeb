import { spawn, type ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import { createInterface } from "node:readline";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createEngine, recoverAbandonedKeys } from "../src/index.js";
import { openTestDatabase, type TestDatabase } from "./support/database.js";
import { httpService, startFakeService, type FakeService } from "./support/fake-service.js";
import { callFirstOperation, ledgerOperation } from "./support/ledger-operation.js";
import {
  STORE_KINDS,
  storeUnderTest,
  type StoreKind,
  type StoreUnderTest,
} from "./support/stores.js";

/**
 * The crash matrix: a server of the package's route (support/crash-server.ts)
 * dies by SIGKILL at each point of an operation, mid-transaction or between
 * commits, with no cleanup and no answer. Then the client's retry, or the
 * recovery worker if no client comes back, finishes the request: one
 * answer, one effect at the service, one row of each kind.
 */
const CRASH_SERVER = new URL("./support/crash-server.ts", import.meta.url).pathname;
const SCOPE = "crash-matrix";

/**
 * The two shapes of operation, each with the points at which its server
 * dies and the rows one run of it writes: the ledger reserves, calls and
 * records; call-first claims with its progress, calls and records. A
 * call-first key dead "before-call" has reached its first point with its
 * claim, so the recovery worker finishes it rather than releasing it.
 */
const OPERATIONS = [
  {
    kind: "ledger",
    make: ledgerOperation,
    points: ["in-first-phase", "after-call", "in-last-phase", "after-commit"],
    rows: { reserved: 1, recorded: 1 },
  },
  {
    kind: "call-first",
    make: callFirstOperation,
    points: ["before-call", "after-call", "in-last-phase", "after-commit"],
    rows: { recorded: 1 },
  },
] as const;

describe.each(STORE_KINDS)("a crash on the %s store", (kind) => crashMatrix(kind));

function crashMatrix<Tx>(kind: StoreKind) {
  let database: TestDatabase;
  let service: FakeService;
  let underTest: StoreUnderTest<Tx>;
  const servers = new Set<ChildProcess>();

  beforeAll(async () => {
    database = await openTestDatabase();
    service = await startFakeService();
    underTest = storeUnderTest(kind, database, {
      leaseSeconds: 30,
      ttlSeconds: 3600,
    }) as unknown as StoreUnderTest<Tx>;
  });
  afterEach(async () => {
    await Promise.all([...servers].map(stop));
  });
  afterAll(async () => {
    await underTest?.close();
    await service?.close();
    await database?.close();
  });

  /** Starts a crash server and waits for the line that says where it listens. */
  async function startServer(
    operation: string,
    crashAt = "",
  ): Promise<{ port: number; exited: Promise<void> }> {
    const child = spawn(process.execPath, ["--import", "tsx", CRASH_SERVER], {
      env: {
        ...process.env,
        DATABASE_URL: database.url,
        DATABASE_CONCURRENT: database.concurrent ? "1" : "0",
        STORE: kind,
        SERVICE_URL: service.url,
        LEASE_SECONDS: "30",
        OPERATION: operation,
        CRASH_AT: crashAt,
      },
      stdio: ["ignore", "pipe", "inherit"],
    });
    servers.add(child);
    const exited = new Promise<void>((resolve) =>
      child.once("exit", () => {
        servers.delete(child);
        resolve();
      }),
    );
    for await (const line of createInterface({ input: child.stdout! })) {
      const port = /^listening (\d+)$/.exec(line)?.[1];
      if (port) return { port: Number(port), exited };
    }
    throw new Error("The crash server exited before it listened");
  }

  async function stop(child: ChildProcess): Promise<void> {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGKILL");
    await exited;
  }

  const send = (port: number, key: string) =>
    fetch(`http://127.0.0.1:${port}/ledger`, {
      method: "POST",
      headers: { "Content-Type": "application/json", "Idempotency-Key": key },
      body: JSON.stringify({ amount: 250 }),
    });

  /** As if the dead attempt's lease had run its course. */
  const expireLease = (key: string) =>
    database.rows(
      `UPDATE idempotency_keys SET lease_expires_at = now() - interval '1 second'
        WHERE scope = $1 AND idem_key = $2 AND state = 'in_flight'`,
      [SCOPE, key],
    );

  async function effectsOf(key: string): Promise<Record<string, number>> {
    const rows = await database.rows<{ label: string; count: number }>(
      `SELECT e.label, count(*)::int AS count FROM effects e
         JOIN idempotency_keys k ON k.id = e.key_id
        WHERE k.scope = $1 AND k.idem_key = $2 GROUP BY e.label`,
      [SCOPE, key],
    );
    return Object.fromEntries(rows.map((row) => [row.label, row.count]));
  }

  /** Sends the request to a server that dies at `point`, and waits for it to be dead. */
  async function crashAt(operation: string, point: string, key: string): Promise<void> {
    const crashing = await startServer(operation, point);
    await expect(send(crashing.port, key)).rejects.toThrow();
    await crashing.exited;
  }

  describe.each(OPERATIONS)("of the $kind operation", ({ kind: operation, make, points, rows }) => {
    it.each(points)("at %s, the client's retry finishes it once", async (point) => {
      const key = randomUUID();
      const effectsBefore = service.effects();
      await crashAt(operation, point, key);
      await expireLease(key);

      const healthy = await startServer(operation);
      const retry = await send(healthy.port, key);
      expect(retry.status).toBe(201);
      const { receipt } = (await retry.json()) as { receipt: string };
      expect(receipt).toMatch(/^receipt-\d+$/);
      const again = await send(healthy.port, key);
      expect(again.headers.get("idempotent-replayed")).toBe("true");
      expect(await again.json()).toEqual({ receipt });

      expect(service.effects() - effectsBefore).toBe(1);
      expect(await effectsOf(key)).toEqual(rows);
    });

    it.each(points)(
      "at %s, the recovery worker finishes it once when nobody retries",
      async (point) => {
        const key = randomUUID();
        const effectsBefore = service.effects();
        await crashAt(operation, point, key);
        await expireLease(key);

        const resumer = make<Tx>(httpService(service.url), (tx, row) =>
          underTest.writeEffect(tx, row),
        );
        const engine = createEngine({ store: underTest.store, operations: [resumer] });
        const report = await recoverAbandonedKeys(engine, { batchSize: 100 });
        expect(report.failed).toBe(0);

        const [row] = await database.rows<{ state: string; response_body: unknown }>(
          `SELECT state, response_body FROM idempotency_keys WHERE scope = $1 AND idem_key = $2`,
          [SCOPE, key],
        );
        if (point === "in-first-phase") {
          // Nothing but the claim was written: the worker released it, and a retry starts afresh.
          expect(row).toBeUndefined();
          expect(service.effects() - effectsBefore).toBe(0);
          expect(await effectsOf(key)).toEqual({});
          return;
        }
        expect(row).toMatchObject({
          state: "complete",
          response_body: { receipt: expect.any(String) },
        });
        expect(service.effects() - effectsBefore).toBe(1);
        expect(await effectsOf(key)).toEqual(rows);
      },
    );
  });
}
