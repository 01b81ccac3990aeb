import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  createEngine,
  defineOperation,
  fingerprintRequest,
  recoverAbandonedKeys,
  type Engine,
  type KeyedCall,
  type Operation,
} from "../src/index.js";
import { openTestDatabase, type TestDatabase } from "./support/database.js";
import {
  STORE_KINDS,
  storeUnderTest,
  type StoreKind,
  type StoreUnderTest,
} from "./support/stores.js";
import {
  callFirstOperation,
  Crash,
  IdempotentService,
  ledgerOperation,
  type LedgerInput,
  type CrashPoint,
} from "./support/ledger-operation.js";

describe.each(STORE_KINDS)("the engine on the %s store", (kind) => engineTests(kind));

/** `Tx` is the store's transaction: a pg client, or Prisma's transaction client. */
function engineTests<Tx>(kind: StoreKind) {
  let database: TestDatabase;
  let service: IdempotentService;
  let crashAt: CrashPoint | undefined;
  let engine: Engine<Tx>;
  let operation: Operation<LedgerInput, Tx>;
  let underTest: StoreUnderTest<Tx>;
  let scopeNumber = 0;
  let scope: string;

  beforeAll(async () => {
    database = await openTestDatabase();
    underTest = storeUnderTest(kind, database, {
      leaseSeconds: 30,
      ttlSeconds: 3600,
    }) as unknown as StoreUnderTest<Tx>;
  });
  afterAll(async () => {
    await underTest?.close();
    await database?.close();
  });

  const ledger = (options: Parameters<typeof ledgerOperation>[2] = {}) =>
    ledgerOperation<Tx>(service, (tx, row) => underTest.writeEffect(tx, row), options);

  beforeEach(() => {
    service = new IdempotentService();
    crashAt = undefined;
    operation = ledger({
      onPoint: (point) => {
        if (point === crashAt) throw new Crash(point);
      },
    });
    engine = createEngine({ store: underTest.store, operations: [operation] });
    scope = `tenant-${++scopeNumber}`;
  });

  const call = (key: string, body: unknown = { amount: 100 }): KeyedCall => ({
    scope,
    key,
    method: "POST",
    path: "/ledger",
    body,
  });

  async function effects(label: string): Promise<number> {
    const [row] = await database.rows<{ count: number }>(
      `SELECT count(*)::int AS count FROM effects WHERE scope = $1 AND label = $2`,
      [scope, label],
    );
    return row!.count;
  }

  async function keyRow(key: string) {
    const [row] = await database.rows<{
      id: string;
      scope: string;
      fingerprint: string;
      state: string;
      recovery_point: string;
      progress: unknown;
      expires_at: Date;
    }>(
      `SELECT id::text, scope, fingerprint, state, recovery_point, progress, expires_at FROM idempotency_keys WHERE scope = $1 AND idem_key = $2`,
      [scope, key],
    );
    return row;
  }

  /** As if the attempt's process died: its lease has run out. */
  async function expireLease(key: string) {
    await database.rows(
      `UPDATE idempotency_keys SET lease_expires_at = now() - interval '1 second' WHERE scope = $1 AND idem_key = $2`,
      [scope, key],
    );
  }

  describe("an operation under a key", () => {
    it("runs its phases once and stores the response with the last commit", async () => {
      const outcome = await engine.run(operation, call("k1"));
      const row = await keyRow("k1");
      expect(outcome).toEqual({
        kind: "completed",
        stored: {
          status: 201,
          headers: { "Content-Type": "application/json" },
          body: { receipt: "receipt-1-100" },
        },
        lifetime: { expiresAt: row!.expires_at, retentionSeconds: 3600, leaseSeconds: 30 },
      });
      expect(await effects("reserved")).toBe(1);
      expect(await effects("recorded")).toBe(1);
      expect(row).toMatchObject({ state: "complete", recovery_point: "finished" });
    });

    it("records every point the key passed, the service's answer's at the last commit, which wrote it", async () => {
      await engine.run(operation, call("k1"));
      const [row] = await database.rows<{ points: string[]; answer_in_last_commit: boolean }>(
        `SELECT array(SELECT jsonb_object_keys(points_reached) ORDER BY 1) AS points,
                (points_reached->>'recording')::timestamptz = completed_at AS answer_in_last_commit
           FROM idempotency_keys WHERE scope = $1 AND idem_key = 'k1'`,
        [scope],
      );
      expect(row).toEqual({ points: ["calling", "recording"], answer_in_last_commit: true });
    });

    it("answers a repeat from the stored response and runs nothing again", async () => {
      const first = await engine.run(operation, call("k1"));
      const again = await engine.run(operation, call("k1", { amount: 100 }));
      const { stored, lifetime } = first as { stored: unknown; lifetime: unknown };
      expect(again).toEqual({ kind: "replay", stored, lifetime });
      expect(service.calls).toBe(1);
      expect(await effects("recorded")).toBe(1);
    });

    it("refuses the key for a different request (422) and leaves the first result alone", async () => {
      const first = await engine.run(operation, call("k1", { amount: 100 }));
      expect(await engine.run(operation, call("k1", { amount: 200 }))).toEqual({
        kind: "fingerprint-mismatch",
        lifetime: (first as { lifetime: unknown }).lifetime,
      });
      expect(service.calls).toBe(1);
    });

    it("refuses a body the operation does not take, and stores nothing", async () => {
      const outcome = await engine.run(operation, call("k1", { amount: -1 }));
      expect(outcome).toMatchObject({ kind: "invalid-body" });
      expect(await keyRow("k1")).toBeUndefined();
    });

    it("keeps two scopes' keys apart", async () => {
      await engine.run(operation, call("shared-key"));
      const other = { ...call("shared-key"), scope: `${scope}-other` };
      expect(await engine.run(operation, other)).toMatchObject({ kind: "completed" });
      expect(service.effects).toBe(2);
    });

    it("answers 409 while another attempt holds the key", async () => {
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      const holding = ledger({ name: "holding", beforeCall: () => held });
      const holdingEngine = createEngine({ store: engine.store, operations: [holding] });
      const first = holdingEngine.run(holding, call("k1"));
      await expect.poll(async () => (await keyRow("k1"))?.recovery_point).toBe("calling");
      expect(await holdingEngine.run(holding, call("k1"))).toMatchObject({
        kind: "in-flight",
        retryAfterSeconds: 1,
        lifetime: { expiresAt: (await keyRow("k1"))!.expires_at },
      });
      release();
      expect(await first).toMatchObject({ kind: "completed" });
    });

    it("releases a key a refused admission claimed, so the same key works later", async () => {
      const refused = await engine.run(operation, call("k1"), {
        admit: async () => "too many" as const,
      });
      expect(refused).toBe("too many");
      expect(await keyRow("k1")).toBeUndefined();
      expect(await engine.run(operation, call("k1"))).toMatchObject({ kind: "completed" });
    });
    it("tells the claim's row and the request as the phases see it, before it admits", async () => {
      const told: { keyId: string; scope: string; key: string; fingerprint: string }[] = [];
      const admittedAfter: number[] = [];
      const outcome = await engine.run(operation, call("k1"), {
        onClaimed: (claim, request) => told.push({ ...request, keyId: claim.keyId }),
        admit: async () => {
          admittedAfter.push(told.length);
          return undefined;
        },
      });
      expect(outcome).toMatchObject({ kind: "completed" });
      const row = await keyRow("k1");
      expect(told).toEqual([
        { scope: row!.scope, key: "k1", fingerprint: row!.fingerprint, keyId: row!.id },
      ]);
      expect(admittedAfter).toEqual([1]);
    });
  });

  describe("a failed attempt", () => {
    it("releases the key when its first phase fails: its writes rolled back, the retry starts afresh", async () => {
      crashAt = "in-first-phase";
      expect(await engine.run(operation, call("k1"))).toEqual({ kind: "internal-error" });
      expect(await keyRow("k1")).toBeUndefined();
      expect(await effects("reserved")).toBe(0);
      crashAt = undefined;
      expect(await engine.run(operation, call("k1"))).toMatchObject({ kind: "completed" });
      expect(await effects("reserved")).toBe(1);
    });

    it("keeps the key when the service's answer is lost, and the retry finishes it with one effect", async () => {
      service.nextFailure = "lost";
      expect(await engine.run(operation, call("k1"))).toMatchObject({
        kind: "dependency-unavailable",
        retryAfterSeconds: 1,
      });
      expect(await keyRow("k1")).toMatchObject({ state: "in_flight", recovery_point: "calling" });
      // Its lease was ended, so the retry takes it over at once.
      expect(await engine.run(operation, call("k1"))).toMatchObject({
        kind: "completed",
        stored: { body: { receipt: "receipt-1-100" } },
      });
      expect(service.calls).toBe(2);
      expect(service.effects).toBe(1);
      expect(await effects("reserved")).toBe(1);
      expect(await effects("recorded")).toBe(1);
    });

    it("keeps a key whose first phase wrote when the service refuses, rather than orphan the write", async () => {
      service.nextFailure = "rejected";
      expect(await engine.run(operation, call("k1"))).toMatchObject({
        kind: "dependency-rejected",
      });
      expect(await keyRow("k1")).toMatchObject({ state: "in_flight", recovery_point: "calling" });
      // Its lease was ended: the retry resumes it at once, and the reservation is not made twice.
      expect(await engine.run(operation, call("k1"))).toMatchObject({ kind: "completed" });
      expect(await effects("reserved")).toBe(1);
    });

    for (const point of ["after-call", "in-last-phase"] as const) {
      it(`dies ${point}: the recovery worker finishes it, with one effect and one of each row`, async () => {
        crashAt = point;
        expect(await engine.run(operation, call("k1"))).toEqual({ kind: "internal-error" });
        crashAt = undefined;
        expect(await keyRow("k1")).toMatchObject({ state: "in_flight" });
        await expireLease("k1");
        const report = await recoverAbandonedKeys(engine, { batchSize: 10 });
        // Other tests' abandoned keys may be finished in the same run.
        expect(report).toMatchObject({ failed: 0 });
        expect(report.completed).toBeGreaterThanOrEqual(1);
        expect(await keyRow("k1")).toMatchObject({ state: "complete" });
        expect(service.effects).toBe(1);
        expect(await effects("reserved")).toBe(1);
        expect(await effects("recorded")).toBe(1);
        expect(await engine.run(operation, call("k1"))).toMatchObject({
          kind: "replay",
          stored: { body: { receipt: "receipt-1-100" } },
        });
      });
    }

    it("dies in the phase after the service answered: the answer was never written alone, so the retry asks again under the same key", async () => {
      crashAt = "in-last-phase";
      expect(await engine.run(operation, call("k1"))).toEqual({ kind: "internal-error" });
      crashAt = undefined;
      expect(await keyRow("k1")).toMatchObject({
        state: "in_flight",
        recovery_point: "calling",
        progress: {},
      });
      await expireLease("k1");
      expect(await engine.run(operation, call("k1"))).toMatchObject({
        kind: "completed",
        stored: { body: { receipt: "receipt-1-100" } },
      });
      expect(service.calls).toBe(2);
      expect(service.effects).toBe(1);
      expect(await effects("recorded")).toBe(1);
    });

    it("is taken over by a retry once its lease runs out, and resumed where it stopped", async () => {
      crashAt = "after-call";
      await engine.run(operation, call("k1"));
      crashAt = undefined;
      expect(await engine.run(operation, call("k1"))).toMatchObject({ kind: "in-flight" });
      await expireLease("k1");
      expect(await engine.run(operation, call("k1"))).toMatchObject({ kind: "completed" });
      expect(service.effects).toBe(1);
      expect(await effects("reserved")).toBe(1);
    });

    it("moves on to a fresh side-effect key when the service proves the current one dead", async () => {
      const dead = ledger({ name: "dead-keys" });
      const calling = dead.phases[1]!;
      if (calling.kind !== "side-effect") throw new Error("phase 2 is the side effect");
      const seen: string[] = [];
      const retrying = {
        ...calling,
        async run(context: Parameters<typeof calling.run>[0]) {
          seen.push(context.sideEffectKey);
          if (seen.length === 1) {
            service.deadKeys.add(context.sideEffectKey);
            await context.nextSideEffectKey();
            seen.push(context.sideEffectKey);
          }
          return calling.run(context);
        },
      };
      const deadOperation = { ...dead, phases: [dead.phases[0]!, retrying, dead.phases[2]!] };
      const deadEngine = createEngine({ store: engine.store, operations: [deadOperation] });
      expect(await deadEngine.run(deadOperation, call("k1"))).toMatchObject({ kind: "completed" });
      expect(seen).toHaveLength(2);
      expect(seen[1]).toBe(`${seen[0]}.1`);
    });
  });

  describe("a crashed key nobody comes back for", () => {
    it("is released by the recovery worker when it never moved past its claim", async () => {
      // A claim whose attempt died before its first commit.
      await database.rows(
        `INSERT INTO idempotency_keys (scope, idem_key, operation, fingerprint, recovery_point, lease_owner, lease_expires_at, expires_at)
         VALUES ($1, 'k1', 'ledger', repeat('0', 64), 'started', gen_random_uuid(), now() - interval '1 second', now() + interval '1 hour')`,
        [scope],
      );
      expect(await recoverAbandonedKeys(engine, { batchSize: 10 })).toMatchObject({ released: 1 });
      expect(await keyRow("k1")).toBeUndefined();
    });
  });

  describe("identical requests at once", () => {
    it.runIf(process.env.DATABASE_URL)(
      "run the operation once; every other one is answered from the key",
      async () => {
        const outcomes = await Promise.all(
          Array.from({ length: 25 }, () => engine.run(operation, call("storm"))),
        );
        const kinds = outcomes.map((outcome) => outcome.kind);
        expect(kinds.filter((kind) => kind === "completed")).toHaveLength(1);
        expect(kinds.every((kind) => ["completed", "replay", "in-flight"].includes(kind))).toBe(
          true,
        );
        expect(service.effects).toBe(1);
        expect(await effects("reserved")).toBe(1);
        expect(await effects("recorded")).toBe(1);
      },
    );
  });

  describe("an operation that starts with its side effect", () => {
    const callFirst = (options: Parameters<typeof callFirstOperation>[2] = {}) =>
      callFirstOperation<Tx>(service, (tx, row) => underTest.writeEffect(tx, row), {
        onPoint: (point) => {
          if (point === crashAt) throw new Crash(point);
        },
        ...options,
      });
    const engineFor = (op: Operation<LedgerInput, Tx>) =>
      createEngine({ store: engine.store, operations: [op] });

    async function claimedRow(key: string) {
      const [row] = await database.rows<{
        recovery_point: string;
        progress: unknown;
        reached_at_claim: boolean;
        points_reached: Record<string, string>;
      }>(
        `SELECT recovery_point, progress, point_reached_at = created_at AS reached_at_claim, points_reached
           FROM idempotency_keys WHERE scope = $1 AND idem_key = $2`,
        [scope, key],
      );
      return row;
    }

    it("claims the key at the side effect with what the claim records, and runs each phase once", async () => {
      const op = callFirst();
      let atCall: Awaited<ReturnType<typeof claimedRow>>;
      const held = callFirst({ beforeCall: async () => void (atCall = await claimedRow("k1")) });
      expect(await engineFor(held).run(held, call("k1", { amount: 250 }))).toMatchObject({
        kind: "completed",
        stored: { body: { receipt: "receipt-1-250" } },
      });
      expect(atCall!).toMatchObject({
        recovery_point: "calling",
        progress: { amount: 250 },
        reached_at_claim: true,
      });
      expect(Object.keys(atCall!.points_reached)).toEqual(["calling"]);
      expect(service.calls).toBe(1);
      expect(await effects("recorded")).toBe(1);
      expect(await engineFor(op).run(op, call("k1", { amount: 250 }))).toMatchObject({
        kind: "replay",
      });
    });

    it("keeps the key when the side effect fails before it could tell whether it called: the recovery worker calls once", async () => {
      let failing = true;
      const op = callFirst({
        beforeCall: async () => {
          if (failing) throw new Error("died before the call");
        },
      });
      const opEngine = engineFor(op);
      expect(await opEngine.run(op, call("k1"))).toEqual({ kind: "internal-error" });
      expect(await keyRow("k1")).toMatchObject({ state: "in_flight", recovery_point: "calling" });
      await expireLease("k1");
      failing = false;
      expect(await recoverAbandonedKeys(opEngine, { batchSize: 10 })).toMatchObject({ failed: 0 });
      expect(await keyRow("k1")).toMatchObject({ state: "complete" });
      expect(service.calls).toBe(1);
      expect(await effects("recorded")).toBe(1);
    });

    it("releases a new key whose first call the service refused outright, when the phase allows it", async () => {
      const op = callFirst({ rejectionReleasesKey: true });
      service.nextFailure = "rejected";
      expect(await engineFor(op).run(op, call("k1"))).toMatchObject({
        kind: "dependency-rejected",
      });
      expect(await keyRow("k1")).toBeUndefined();
      expect(await engineFor(op).run(op, call("k1"))).toMatchObject({ kind: "completed" });
      expect(service.effects).toBe(1);
    });

    it("keeps a taken-over key the service refuses: the attempt before may have called with success", async () => {
      const op = callFirst({ rejectionReleasesKey: true });
      const opEngine = engineFor(op);
      crashAt = "after-call";
      expect(await opEngine.run(op, call("k1"))).toEqual({ kind: "internal-error" });
      crashAt = undefined;
      await expireLease("k1");
      service.nextFailure = "rejected";
      expect(await opEngine.run(op, call("k1"))).toMatchObject({ kind: "dependency-rejected" });
      expect(await keyRow("k1")).toMatchObject({ state: "in_flight", recovery_point: "calling" });
      expect(await opEngine.run(op, call("k1"))).toMatchObject({ kind: "completed" });
      expect(service.effects).toBe(1);
    });

    it("claims afresh a key an earlier version claimed at a first point it no longer has, and never moved", async () => {
      const op = callFirst();
      const body = { amount: 300 };
      // As a version whose first phase was atomic ("started") left it: claimed, then dead.
      await database.rows(
        `INSERT INTO idempotency_keys (scope, idem_key, operation, fingerprint, request, recovery_point, lease_owner, lease_expires_at, expires_at)
         VALUES ($1, 'k1', $2, $3, $4::jsonb, 'started', gen_random_uuid(), now() - interval '1 second', now() + interval '1 hour')`,
        [scope, op.name, fingerprintRequest("POST", "/ledger", body), JSON.stringify(body)],
      );
      const before = await keyRow("k1");
      expect(await engineFor(op).run(op, call("k1", body))).toMatchObject({
        kind: "completed",
        stored: { body: { receipt: "receipt-1-300" } },
      });
      expect((await keyRow("k1"))!.id).not.toBe(before!.id);
      expect(service.effects).toBe(1);
    });

    it("releases the key when admission refuses, or fails to decide, before anything is called", async () => {
      const op = callFirst();
      const opEngine = engineFor(op);
      expect(await opEngine.run(op, call("k1"), { admit: async () => "too many" as const })).toBe(
        "too many",
      );
      expect(await keyRow("k1")).toBeUndefined();
      const failing = async (): Promise<undefined> => {
        throw new Error("the rate limit's store is down");
      };
      expect(await opEngine.run(op, call("k1"), { admit: failing })).toEqual({
        kind: "internal-error",
      });
      expect(await keyRow("k1")).toBeUndefined();
      expect(service.calls).toBe(0);
      expect(await opEngine.run(op, call("k1"))).toMatchObject({ kind: "completed" });
    });
  });

  describe("defineOperation", () => {
    it("refuses an operation that starts with a side effect unless its claim records it", () => {
      expect(() => defineOperation({ ...ledger({}), phases: [ledger({}).phases[1]!] })).toThrow(
        /starts with a side effect but has no progressAtClaim/,
      );
      expect(() =>
        defineOperation({ ...ledger({}), progressAtClaim: ({ amount }) => ({ amount }) }),
      ).toThrow(/progressAtClaim is for an operation that starts with a side effect/);
    });

    it("refuses two phases at one point, and the completed key's point", () => {
      const [first, second] = ledger({}).phases;
      expect(() => defineOperation({ ...ledger({}), phases: [first!, first!] })).toThrow(
        /two phases/,
      );
      expect(() =>
        defineOperation({ ...ledger({}), phases: [first!, { ...second!, point: "finished" }] }),
      ).toThrow(/completed key's point/);
    });

    it("will not let a phase move the key backwards", async () => {
      const [first, second, third] = ledger({}).phases;
      if (third?.kind !== "atomic") throw new Error("phase 3 is atomic");
      const looping = defineOperation({
        ...ledger({}),
        name: "looping",
        phases: [first!, second!, { ...third, run: async () => ({ to: "started" }) }],
      });
      const loopingEngine = createEngine({ store: engine.store, operations: [looping] });
      expect(await loopingEngine.run(looping, call("k1"))).toEqual({ kind: "internal-error" });
      // The service's answer was to commit with that phase, so the key is back at the call.
      expect(await keyRow("k1")).toMatchObject({ state: "in_flight", recovery_point: "calling" });
    });

    it("will not run an operation the engine could not recover", async () => {
      await expect(engine.run(ledger({ name: "unregistered" }), call("k1"))).rejects.toThrow(
        /not one of the engine's operations/,
      );
    });
  });
}
