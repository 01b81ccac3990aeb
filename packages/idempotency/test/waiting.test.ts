import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  createEngine,
  KeyWaiters,
  type Engine,
  type KeyedCall,
  type Operation,
  type Outcome,
} from "../src/index.js";
import { listenForKeyChanges } from "../src/pg.js";
import { preferredWaitSeconds } from "../src/request.js";
import { openTestDatabase, type TestDatabase } from "./support/database.js";
import {
  STORE_KINDS,
  storeUnderTest,
  type StoreKind,
  type StoreUnderTest,
} from "./support/stores.js";
import {
  IdempotentService,
  ledgerOperation,
  type LedgerInput,
} from "./support/ledger-operation.js";

describe("Prefer: wait=N, read", () => {
  it.each([
    ["wait=10", 10],
    ["respond-async, wait=5", 5],
    ['wait="7"', 7],
    ["WAIT=3;foo=bar", 3],
    ["wait=2, wait=9", 2],
  ])("%s waits %i s", (field, seconds) => {
    expect(preferredWaitSeconds(field)).toBe(seconds);
  });

  it.each([null, "", "respond-async", "wait=", "wait=-1", "wait=1.5", "wait=abc", "wait=9999999"])(
    "%j asks no wait",
    (field) => {
      expect(preferredWaitSeconds(field)).toBeUndefined();
    },
  );
});

describe.each(STORE_KINDS)("waiting for the first attempt on the %s store", (kind) =>
  waitingTests(kind),
);

/** A gate an attempt stops at until the test opens it. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

function waitingTests<Tx>(kind: StoreKind) {
  let database: TestDatabase;
  let underTest: StoreUnderTest<Tx>;
  let service: IdempotentService;
  let waiters: KeyWaiters;
  let scope: string;
  let scopes = 0;

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
  beforeEach(() => {
    service = new IdempotentService();
    waiters = new KeyWaiters();
    scope = `waiting-${kind}-${++scopes}`;
  });

  const call = (key: string): KeyedCall => ({
    scope,
    key,
    method: "POST",
    path: "/ledger",
    body: { amount: 100 },
  });

  /** An engine whose operation's first attempt stops before its call until `held` opens. */
  function engineHeldAt(held: Promise<void>, options: { maxWaiters?: number } = {}) {
    let first = true;
    const operation: Operation<LedgerInput, Tx> = ledgerOperation<Tx>(
      service,
      (tx, row) => underTest.writeEffect(tx, row),
      {
        beforeCall: async () => {
          if (!first) return;
          first = false;
          await held;
        },
      },
    );
    const engine: Engine<Tx> = createEngine({
      store: underTest.store,
      operations: [operation],
      waiting: { waiters, maxWaitMs: 5_000, ...options },
    });
    return { engine, operation };
  }

  async function keyAt(key: string): Promise<string | undefined> {
    const [row] = await database.rows<{ recovery_point: string }>(
      `SELECT recovery_point FROM idempotency_keys WHERE scope = $1 AND idem_key = $2`,
      [scope, key],
    );
    return row?.recovery_point;
  }

  /** Resolves once a request is waiting on this instance. */
  async function someoneWaits(count = 1) {
    await expect.poll(() => waiters.subscribed, { timeout: 5_000 }).toBeGreaterThanOrEqual(count);
  }

  it("without the preference, answers 409 at once, as before", async () => {
    const held = gate();
    const { engine, operation } = engineHeldAt(held.opened);
    const first = engine.run(operation, call("k"));
    await expect.poll(() => keyAt("k")).toBe("calling");
    const second = await engine.run(operation, call("k"));
    expect(second).toMatchObject({ kind: "in-flight" });
    expect(second).not.toHaveProperty("waited");
    held.open();
    expect(await first).toMatchObject({ kind: "completed" });
  });

  it("gives a waiter the first attempt's answer, as a replay, as soon as it finishes", async () => {
    const held = gate();
    const { engine, operation } = engineHeldAt(held.opened);
    const first = engine.run(operation, call("k"));
    await expect.poll(() => keyAt("k")).toBe("calling");
    const waiting = engine.run(operation, call("k"), { waitMs: 5_000 });
    await someoneWaits();
    held.open();
    const [firstOutcome, waited] = await Promise.all([first, waiting]);
    expect(firstOutcome).toMatchObject({ kind: "completed" });
    expect(waited).toMatchObject({
      kind: "replay",
      stored: (firstOutcome as { stored: unknown }).stored,
      waited: { upToMs: 5_000 },
    });
    // Woken by the commit, not by the deadline.
    expect((waited as { waited: { forMs: number } }).waited.forMs).toBeLessThan(4_000);
    expect(service.calls).toBe(1);
    expect(waiters.subscribed).toBe(0);
  });

  it("wakes a waiter when the first attempt releases the key, and the waiter runs it itself, once", async () => {
    const held = gate();
    const { engine, operation } = engineHeldAt(Promise.resolve());
    // The first attempt is refused in admission, which releases its key.
    const first = engine.run(operation, call("k"), {
      admit: async () => {
        await held.opened;
        return "refused" as const;
      },
    });
    await expect.poll(() => keyAt("k")).toBe("started");
    const waiting = engine.run(operation, call("k"), { waitMs: 5_000 });
    await someoneWaits();
    held.open();
    expect(await first).toBe("refused");
    expect(await waiting).toMatchObject({ kind: "completed" });
    expect(service.calls).toBe(1);
  });

  it("answers 409 at its deadline when the first attempt is still running", async () => {
    const held = gate();
    const { engine, operation } = engineHeldAt(held.opened);
    const first = engine.run(operation, call("k"));
    await expect.poll(() => keyAt("k")).toBe("calling");
    const waited = await engine.run(operation, call("k"), { waitMs: 300 });
    expect(waited).toMatchObject({ kind: "in-flight", waited: { upToMs: 300 } });
    expect((waited as { waited: { forMs: number } }).waited.forMs).toBeGreaterThanOrEqual(290);
    held.open();
    await first;
    expect(waiters.subscribed).toBe(0);
  });

  it("waits no longer than the engine allows, whatever the client asks", async () => {
    const held = gate();
    const { engine, operation } = engineHeldAt(held.opened);
    const first = engine.run(operation, call("k"));
    await expect.poll(() => keyAt("k")).toBe("calling");
    const bounded = createEngine({
      store: underTest.store,
      operations: [operation],
      waiting: { waiters, maxWaitMs: 200 },
    });
    const waited = await bounded.run(operation, call("k"), { waitMs: 60_000 });
    expect(waited).toMatchObject({ kind: "in-flight", waited: { upToMs: 200 } });
    held.open();
    await first;
  });

  it("answers at once past the cap on waiters, and while the waiters cannot hear", async () => {
    const held = gate();
    const { engine, operation } = engineHeldAt(held.opened, { maxWaiters: 1 });
    const first = engine.run(operation, call("k"));
    await expect.poll(() => keyAt("k")).toBe("calling");
    const waiting = engine.run(operation, call("k"), { waitMs: 5_000 });
    await someoneWaits();
    const pastTheCap = await engine.run(operation, call("k"), { waitMs: 5_000 });
    expect(pastTheCap).toMatchObject({ kind: "in-flight" });
    expect(pastTheCap).not.toHaveProperty("waited");

    // The listener is lost: the one waiting is answered now, and nobody waits.
    waiters.lose();
    expect(await waiting).toMatchObject({ kind: "in-flight", waited: { upToMs: 5_000 } });
    expect(await engine.run(operation, call("k"), { waitMs: 5_000 })).not.toHaveProperty("waited");
    held.open();
    await first;
  });

  it.runIf(process.env.DATABASE_URL)(
    "wakes a waiter on another instance by the commit's NOTIFY, and answers it 409 at once when its listener is lost",
    async () => {
      const held = gate();
      // Instance A runs the first attempt; instance B, with a listener of its own, waits.
      const { engine: instanceA, operation } = engineHeldAt(held.opened);
      const waitersB = new KeyWaiters();
      const listener = listenForKeyChanges({
        connection: { connectionString: database.url },
        waiters: waitersB,
      });
      try {
        await expect.poll(() => waitersB.listening).toBe(true);
        const instanceB = createEngine({
          store: underTest.store,
          operations: [operation],
          waiting: { waiters: waitersB, maxWaitMs: 5_000 },
        });
        const first = instanceA.run(operation, call("k"));
        await expect.poll(() => keyAt("k")).toBe("calling");
        const waiting = instanceB.run(operation, call("k"), { waitMs: 5_000 });
        await expect.poll(() => waitersB.subscribed).toBe(1);
        held.open();
        const [firstOutcome, waited] = await Promise.all([first, waiting]);
        expect(firstOutcome).toMatchObject({ kind: "completed" });
        expect(waited).toMatchObject({ kind: "replay" });
        expect((waited as Outcome & { waited: { forMs: number } }).waited.forMs).toBeLessThan(
          4_000,
        );

        // The listener's connection is cut: a waiter is answered at once, and it listens again.
        const again = gate();
        const { engine: nextA, operation: heldAgain } = engineHeldAt(again.opened);
        const second = nextA.run(heldAgain, call("k2"));
        await expect.poll(() => keyAt("k2")).toBe("calling");
        const cut = instanceB.run(operation, call("k2"), { waitMs: 5_000 });
        await expect.poll(() => waitersB.subscribed).toBe(1);
        await database.rows(
          `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
            WHERE datname = current_database() AND query = 'LISTEN idempotency_key_changed'`,
        );
        const cutOutcome = await cut;
        expect(cutOutcome).toMatchObject({ kind: "in-flight" });
        expect((cutOutcome as { waited: { forMs: number } }).waited.forMs).toBeLessThan(4_000);
        await expect.poll(() => waitersB.listening, { timeout: 5_000 }).toBe(true);
        again.open();
        await second;
      } finally {
        await listener.close();
      }
    },
  );
}
