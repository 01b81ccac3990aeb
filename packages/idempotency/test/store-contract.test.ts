import { randomUUID } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  KEY_CHANGED_CHANNEL,
  keyTopic,
  LeaseLostError,
  type Claim,
  type ClaimRequest,
  type KeyStore,
} from "../src/index.js";
import { openTestDatabase, type TestDatabase } from "./support/database.js";
import {
  STORE_KINDS,
  storeUnderTest,
  type StoreKind,
  type StoreUnderTest,
} from "./support/stores.js";

/**
 * The contract both stores keep, on the database under test: one winner
 * among concurrent claims, the replay, the 409 and the 422, the lease and
 * its takeover at every recovery point, the time to live, and a phase whose
 * writes commit with the key's move or not at all.
 */
describe.each(STORE_KINDS)("the %s store", (kind) => contractTests(kind));

const TIMINGS = { leaseSeconds: 30, ttlSeconds: 24 * 60 * 60 };

function contractTests<Tx>(kind: StoreKind) {
  let database: TestDatabase;
  let underTest: StoreUnderTest<Tx>;
  let store: KeyStore<Tx>;

  beforeAll(async () => {
    database = await openTestDatabase();
    underTest = storeUnderTest(kind, database, TIMINGS) as unknown as StoreUnderTest<Tx>;
    store = underTest.store;
  });
  afterAll(async () => {
    await underTest?.close();
    await database?.close();
  });

  function claimRequest(overrides: Partial<ClaimRequest> = {}): ClaimRequest {
    return {
      scope: `scope-${randomUUID()}`,
      key: randomUUID(),
      operation: "ledger",
      fingerprint: "f".repeat(64),
      request: { amount: 100 },
      firstPoint: "started",
      ...overrides,
    };
  }

  async function claimFresh(request = claimRequest()) {
    const result = await store.claim(request);
    if (result.kind !== "claimed") throw new Error(`expected a claim, got ${result.kind}`);
    return { request, claim: result.claim };
  }

  async function keyRow(request: ClaimRequest) {
    const [row] = await database.rows<Record<string, unknown>>(
      `SELECT * FROM idempotency_keys WHERE scope = $1 AND idem_key = $2`,
      [request.scope, request.key],
    );
    return row;
  }

  async function effectsOf(scope: string): Promise<number> {
    const [row] = await database.rows<{ count: number }>(
      `SELECT count(*)::int AS count FROM effects WHERE scope = $1`,
      [scope],
    );
    return row!.count;
  }

  const expireLease = (request: ClaimRequest) =>
    database.rows(
      `UPDATE idempotency_keys SET lease_expires_at = now() - interval '1 second' WHERE scope = $1 AND idem_key = $2`,
      [request.scope, request.key],
    );
  const expireKey = (request: ClaimRequest) =>
    database.rows(
      `UPDATE idempotency_keys SET expires_at = now() - interval '1 second' WHERE scope = $1 AND idem_key = $2`,
      [request.scope, request.key],
    );

  /** Moves the key on in a phase that writes one row of its own. */
  const movePhase = (claim: Claim, request: ClaimRequest, to: string, progress = {}) =>
    store.commitPhase(claim, async (tx) => {
      await underTest.writeEffect(tx, { scope: request.scope, label: to, keyId: claim.keyId });
      return { to, progress };
    });

  const RESPONSE = {
    status: 201,
    headers: { "Content-Type": "application/json" },
    body: { ok: 1 },
  };

  describe("the claim", () => {
    it("claims a new key at the operation's first point and keeps the request to resume it", async () => {
      const { request, claim } = await claimFresh();
      expect(claim).toMatchObject({
        point: "started",
        moved: false,
        tookOver: false,
        progress: {},
      });
      expect(await keyRow(request)).toMatchObject({
        state: "in_flight",
        recovery_point: "started",
        operation: "ledger",
        request: { amount: 100 },
        point_reached_at: null,
        points_reached: {},
      });
    });

    it("claims a key at its first point, reached, when the claim records progress: a side effect may follow at once", async () => {
      const { request, claim } = await claimFresh(claimRequest({ progress: { amount: 7 } }));
      expect(claim).toMatchObject({ point: "started", moved: true, progress: { amount: 7 } });
      const row = await keyRow(request);
      expect(row).toMatchObject({
        state: "in_flight",
        recovery_point: "started",
        progress: { amount: 7 },
        point_reached_at: row!.created_at,
      });
      expect(claim.pointReachedAt).toEqual(row!.created_at);
      expect(Object.keys(row!.points_reached as object)).toEqual(["started"]);
      expect(Date.parse((row!.points_reached as { started: string }).started)).toBe(
        (row!.created_at as Date).getTime(),
      );
    });

    it("gives the key's lifetime from its row: its expiry, the retention and the lease", async () => {
      const { request, claim } = await claimFresh();
      const row = await keyRow(request);
      expect(claim.lifetime).toEqual({
        expiresAt: row!.expires_at,
        retentionSeconds: TIMINGS.ttlSeconds,
        leaseSeconds: TIMINGS.leaseSeconds,
      });
      expect((row!.expires_at as Date).getTime() - (row!.created_at as Date).getTime()).toBe(
        TIMINGS.ttlSeconds * 1000,
      );
    });

    it("answers in-flight while another attempt holds the key, with the key's lifetime", async () => {
      const { request, claim } = await claimFresh();
      expect(await store.claim(request)).toEqual({ kind: "in-flight", lifetime: claim.lifetime });
    });

    it("answers a completed key with its stored response and its lifetime, writing nothing", async () => {
      const { request, claim } = await claimFresh();
      await store.commitPhase(claim, async () => ({ response: RESPONSE }));
      expect(await store.claim(request)).toEqual({
        kind: "replay",
        stored: RESPONSE,
        lifetime: claim.lifetime,
      });
    });

    it("refuses another request under the same key, with that key's lifetime", async () => {
      const { request, claim } = await claimFresh();
      expect(await store.claim({ ...request, fingerprint: "e".repeat(64) })).toEqual({
        kind: "fingerprint-mismatch",
        lifetime: claim.lifetime,
      });
    });

    it("lets a released key be claimed afresh, as a new row", async () => {
      const { request, claim } = await claimFresh();
      await store.release(claim);
      const again = await claimFresh(request);
      expect(again.claim.keyId).not.toBe(claim.keyId);
    });

    it.runIf(process.env.DATABASE_URL)(
      "gives exactly one of many concurrent claims the key",
      async () => {
        const request = claimRequest();
        const results = await Promise.all(Array.from({ length: 30 }, () => store.claim(request)));
        expect(results.filter((result) => result.kind === "claimed")).toHaveLength(1);
        expect(results.filter((result) => result.kind === "in-flight")).toHaveLength(29);
      },
    );
  });

  describe("a phase", () => {
    it("commits its own writes with the key's move, and the claim follows the row", async () => {
      const { request, claim } = await claimFresh();
      await movePhase(claim, request, "calling", { reserved: 1 });
      expect(claim).toMatchObject({ point: "calling", moved: true, progress: { reserved: 1 } });
      expect(await keyRow(request)).toMatchObject({
        recovery_point: "calling",
        progress: { reserved: 1 },
      });
      const row = await keyRow(request);
      expect(row?.point_reached_at).toBeInstanceOf(Date);
      expect(Object.keys(row?.points_reached as object)).toEqual(["calling"]);
      expect(Date.parse((row?.points_reached as { calling: string }).calling)).toBe(
        (row?.point_reached_at as Date).getTime(),
      );
      expect(await effectsOf(request.scope)).toBe(1);
    });

    it("completes the key with its response in the commit of its writes", async () => {
      const { request, claim } = await claimFresh();
      await store.commitPhase(claim, async (tx) => {
        await underTest.writeEffect(tx, {
          scope: request.scope,
          label: "done",
          keyId: claim.keyId,
        });
        return { response: RESPONSE };
      });
      expect(await keyRow(request)).toMatchObject({
        state: "complete",
        recovery_point: "finished",
        response_status: 201,
        response_body: { ok: 1 },
        lease_owner: null,
      });
      expect(await effectsOf(request.scope)).toBe(1);
    });

    it("records the point a side effect's answer passed through, in the commit that moves on or completes", async () => {
      const moving = await claimFresh();
      await movePhase(moving.claim, moving.request, "calling");
      await store.commitPhase(
        moving.claim,
        async () => ({ to: "shipping", progress: { receipt: "r1" } }),
        "recording",
      );
      const moved = await keyRow(moving.request);
      expect(moved).toMatchObject({ recovery_point: "shipping", progress: { receipt: "r1" } });
      const points = moved?.points_reached as Record<string, string>;
      expect(Object.keys(points).sort()).toEqual(["calling", "recording", "shipping"]);
      expect(Date.parse(points.recording!)).toBe((moved?.point_reached_at as Date).getTime());

      const completing = await claimFresh();
      await movePhase(completing.claim, completing.request, "calling");
      await store.commitPhase(completing.claim, async () => ({ response: RESPONSE }), "recording");
      const completed = await keyRow(completing.request);
      expect(Object.keys(completed?.points_reached as object).sort()).toEqual([
        "calling",
        "recording",
      ]);
      expect(Date.parse((completed?.points_reached as { recording: string }).recording)).toBe(
        (completed?.completed_at as Date).getTime(),
      );
    });

    it("writes nothing when it throws: neither its rows nor the move", async () => {
      const { request, claim } = await claimFresh();
      await expect(
        store.commitPhase(claim, async (tx) => {
          await underTest.writeEffect(tx, { scope: request.scope, label: "x", keyId: claim.keyId });
          throw new Error("the phase failed");
        }),
      ).rejects.toThrow("the phase failed");
      expect(await effectsOf(request.scope)).toBe(0);
      expect(await keyRow(request)).toMatchObject({ recovery_point: "started" });
    });

    it("keeps a side effect's result with a move of its own, durable or not", async () => {
      const { request, claim } = await claimFresh();
      await movePhase(claim, request, "calling");
      await store.move(claim, { to: "recording", progress: { receipt: "r1" } }, { durable: false });
      expect(await keyRow(request)).toMatchObject({
        recovery_point: "recording",
        progress: { receipt: "r1" },
      });
    });

    it("moves on to the next side-effect key, durably, restarting its clock", async () => {
      const { request, claim } = await claimFresh();
      await movePhase(claim, request, "calling");
      const reachedAt = claim.pointReachedAt;
      await store.nextSideEffectKey(claim);
      expect(claim.sideEffectGeneration).toBe(1);
      expect(claim.pointReachedAt.getTime()).toBeGreaterThanOrEqual(reachedAt.getTime());
      await expireLease(request);
      expect(await store.claim(request)).toMatchObject({
        kind: "claimed",
        claim: { keyId: claim.keyId, point: "calling", sideEffectGeneration: 1 },
      });
    });
  });

  describe("waiting for a key", () => {
    it("marks an in-flight key awaited, and refuses one no longer in flight", async () => {
      const { request, claim } = await claimFresh();
      expect(await store.markAwaited(request.scope, request.key)).toBe(true);
      expect(await keyRow(request)).toMatchObject({ awaited: true });
      await store.commitPhase(claim, async () => ({ response: RESPONSE }));
      expect(await store.markAwaited(request.scope, request.key)).toBe(false);
      expect(await store.markAwaited(request.scope, "no-such-key")).toBe(false);
    });

    it.runIf(process.env.DATABASE_URL)(
      "notifies a completion, a release or a lease handed back only when a request awaits the key",
      async () => {
        const listener = new pg.Client({ connectionString: database.url });
        await listener.connect();
        const heard: string[] = [];
        listener.on("notification", (message) => heard.push(message.payload ?? ""));
        await listener.query(`LISTEN ${KEY_CHANGED_CHANNEL}`);
        try {
          const topicOf = (request: ClaimRequest) => keyTopic(request.scope, request.key);
          const quiet = await claimFresh();
          await store.commitPhase(quiet.claim, async () => ({ response: RESPONSE }));
          const completed = await claimFresh();
          await store.markAwaited(completed.request.scope, completed.request.key);
          await store.commitPhase(completed.claim, async () => ({ response: RESPONSE }));
          const released = await claimFresh();
          await store.markAwaited(released.request.scope, released.request.key);
          await store.release(released.claim);
          const handedBack = await claimFresh();
          await store.markAwaited(handedBack.request.scope, handedBack.request.key);
          await store.endLease(handedBack.claim);
          const expected = [completed, released, handedBack].map(({ request }) => topicOf(request));
          await expect.poll(() => heard.length).toBe(3);
          expect(heard).toEqual(expected);
          expect(heard).not.toContain(topicOf(quiet.request));
        } finally {
          await listener.end();
        }
      },
    );
  });

  describe("the lease", () => {
    it.each(["started", "calling"])(
      "is taken over once it runs out at %s, with what a resume needs",
      async (point) => {
        const { request, claim } = await claimFresh();
        if (point === "calling") await movePhase(claim, request, "calling", { reserved: 7 });
        await expireLease(request);
        const again = await store.claim(request);
        expect(again).toMatchObject({
          kind: "claimed",
          claim: {
            keyId: claim.keyId,
            tookOver: true,
            point,
            moved: point !== "started",
            progress: point === "calling" ? { reserved: 7 } : {},
            // The key's, from its claim: a takeover does not extend it.
            lifetime: claim.lifetime,
          },
        });
      },
    );

    it("lists a key whose lease ran out for the recovery worker, and lets exactly one of two takers have it", async () => {
      const { request, claim } = await claimFresh();
      await expireLease(request);
      expect(await store.findAbandoned(10_000)).toContainEqual({
        keyId: claim.keyId,
        scope: request.scope,
        key: request.key,
        operation: "ledger",
        fingerprint: request.fingerprint,
        request: { amount: 100 },
      });
      const takers = await Promise.all([store.takeOver(claim.keyId), store.takeOver(claim.keyId)]);
      expect(takers.filter(Boolean)).toHaveLength(1);
    });

    it("leaves the old holder able to write nothing once the key is taken over", async () => {
      const { request, claim } = await claimFresh();
      const stale = { ...claim };
      await expireLease(request);
      expect(await store.takeOver(claim.keyId)).toBeDefined();

      await expect(movePhase(stale, request, "calling")).rejects.toBeInstanceOf(LeaseLostError);
      await expect(
        store.move(stale, { to: "calling", progress: {} }, { durable: false }),
      ).rejects.toBeInstanceOf(LeaseLostError);
      await expect(
        store.commitPhase(stale, async () => ({ response: RESPONSE })),
      ).rejects.toBeInstanceOf(LeaseLostError);
      await expect(store.nextSideEffectKey(stale)).rejects.toBeInstanceOf(LeaseLostError);
      await store.release(stale);

      expect(await effectsOf(request.scope)).toBe(0);
      expect(await keyRow(request)).toMatchObject({
        state: "in_flight",
        recovery_point: "started",
      });
    });

    it("tells an old holder whose phase failed after a takeover that it lost the key, not its phase's error", async () => {
      const { request, claim } = await claimFresh();
      const stale = { ...claim };
      await expireLease(request);
      expect(await store.takeOver(claim.keyId)).toBeDefined();
      // Its writes collide with the new holder's (a unique index, say) before its move could run.
      const collided = store.commitPhase(stale, async () => {
        throw new Error("duplicate key value violates unique constraint");
      });
      await expect(collided).rejects.toBeInstanceOf(LeaseLostError);
      // The holder's own failure stays its own.
      const { claim: held } = await claimFresh();
      const failed = store.commitPhase(held, async () => {
        throw new Error("the phase's own bug");
      });
      await expect(failed).rejects.toThrow("the phase's own bug");
    });

    it("ends at once when the attempt hands it back, so the next retry takes over without waiting", async () => {
      const { request, claim } = await claimFresh();
      await movePhase(claim, request, "calling");
      await store.endLease(claim);
      expect(await store.claim(request)).toMatchObject({
        kind: "claimed",
        claim: { keyId: claim.keyId, tookOver: true, point: "calling" },
      });
    });
  });

  describe("the time to live", () => {
    it("starts a complete key past it afresh, as a new row", async () => {
      const { request, claim } = await claimFresh();
      await store.commitPhase(claim, async () => ({ response: RESPONSE }));
      await expireKey(request);
      const again = await claimFresh(request);
      expect(again.claim.keyId).not.toBe(claim.keyId);
    });

    it("takes over, rather than deletes, an abandoned key that moved: the same row, so the same side-effect key", async () => {
      const { request, claim } = await claimFresh();
      await movePhase(claim, request, "calling");
      await expireKey(request);
      await expireLease(request);
      expect(await store.claim(request)).toMatchObject({
        kind: "claimed",
        claim: { keyId: claim.keyId, point: "calling", tookOver: true },
      });
    });

    it("takes over an abandoned key whose claim recorded progress, with it, since its side effect may have happened", async () => {
      const { request, claim } = await claimFresh(claimRequest({ progress: { amount: 7 } }));
      await expireKey(request);
      await expireLease(request);
      expect(await store.deleteExpired(100)).toBeGreaterThanOrEqual(0);
      expect(await store.claim(request)).toMatchObject({
        kind: "claimed",
        claim: { keyId: claim.keyId, point: "started", moved: true, progress: { amount: 7 } },
      });
    });

    it("answers in-flight for a key past it whose attempt still holds the lease, and leaves it alone", async () => {
      const { request, claim } = await claimFresh();
      await expireKey(request);
      const row = await keyRow(request);
      expect(await store.claim(request)).toEqual({
        kind: "in-flight",
        lifetime: { ...claim.lifetime, expiresAt: row!.expires_at },
      });
      expect(row).toMatchObject({ id: claim.keyId, state: "in_flight" });
    });

    it("lets the reaper delete complete keys and never-moved abandoned ones past it, and nothing else", async () => {
      const complete = await claimFresh();
      await store.commitPhase(complete.claim, async () => ({ response: RESPONSE }));
      const abandoned = await claimFresh();
      await expireLease(abandoned.request);
      const held = await claimFresh();
      const moved = await claimFresh();
      await movePhase(moved.claim, moved.request, "calling");
      await expireLease(moved.request);
      const fresh = await claimFresh();
      await store.commitPhase(fresh.claim, async () => ({ response: RESPONSE }));
      for (const { request } of [complete, abandoned, held, moved]) await expireKey(request);

      let deleted = 0;
      for (
        let batch = await store.deleteExpired(1);
        batch > 0;
        batch = await store.deleteExpired(1)
      )
        deleted += batch;

      expect(deleted).toBeGreaterThanOrEqual(2);
      expect(await keyRow(complete.request)).toBeUndefined();
      expect(await keyRow(abandoned.request)).toBeUndefined();
      expect(await keyRow(held.request)).toBeDefined();
      expect(await keyRow(moved.request)).toBeDefined();
      expect(await keyRow(fresh.request)).toBeDefined();
    });
  });
}
