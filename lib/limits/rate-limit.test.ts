import { randomUUID } from "node:crypto";
import pg from "pg";
import { afterAll, describe, expect, inject, it } from "vitest";
import { deleteEndedWindows, postgresRateLimit, type LimitDecision } from "@/lib/limits/rate-limit";
import {
  closeTestDb,
  endRateLimitWindow,
  rateLimitPoints as windowPoints,
  testDb,
} from "@/lib/testing/database";
import { itOnServer } from "@/lib/testing/postgres-server-only";

/**
 * The rate limit's SQL on the database under test: the window's count, the
 * refusal and its wait, a new window once the last one ended, no lost count
 * when requests overlap.
 *
 * Every window here is far longer than a test runs, however slow the
 * machine: a window that ended mid-test would let through what the test
 * expects refused. Where a test needs a window to end, it ends it in the
 * table (endRateLimitWindow) rather than waiting for the clock.
 */
afterAll(closeTestDb);

const WINDOW_SECONDS = 600;

describe("a rate limit", () => {
  it("allows its points in a window, then refuses with the seconds left until the window ends", async () => {
    const limit = postgresRateLimit(testDb(), {
      name: "test_window",
      points: 3,
      windowSeconds: WINDOW_SECONDS,
    });
    const caller = randomUUID();
    const startedAt = performance.now();
    const decisions: LimitDecision[] = [];
    for (let request = 0; request < 4; request += 1) decisions.push(await limit.consume(caller));
    const tookSeconds = (performance.now() - startedAt) / 1000;

    expect(decisions.slice(0, 3)).toEqual([
      { allowed: true },
      { allowed: true },
      { allowed: true },
    ]);
    expect(decisions[3]).toMatchObject({ allowed: false });
    // The window began at the first request: what is left of it is all but
    // the time these four requests took.
    const { retryAfterSeconds } = decisions[3] as { retryAfterSeconds: number };
    expect(retryAfterSeconds).toBeGreaterThanOrEqual(Math.floor(WINDOW_SECONDS - tookSeconds));
    expect(retryAfterSeconds).toBeLessThanOrEqual(WINDOW_SECONDS);
  });

  it("starts a new window once the last one has ended", async () => {
    const limit = postgresRateLimit(testDb(), {
      name: "test_window",
      points: 1,
      windowSeconds: WINDOW_SECONDS,
    });
    const caller = randomUUID();
    expect(await limit.consume(caller)).toEqual({ allowed: true });
    expect(await limit.consume(caller)).toMatchObject({ allowed: false });
    await endRateLimitWindow(`test_window:${caller}`);
    expect(await limit.consume(caller)).toEqual({ allowed: true });
    expect(await windowPoints(`test_window:${caller}`)).toBe(1);
  });

  itOnServer(
    "concurrency",
    "loses no count when a caller's requests overlap: exactly its points are allowed",
    async () => {
      // A pool of its own, so that all twenty are in flight at once.
      const pool = new pg.Pool({ connectionString: inject("databaseUrl"), max: 20 });
      const limit = postgresRateLimit(pool, {
        name: "test_window",
        points: 5,
        windowSeconds: WINDOW_SECONDS,
      });
      const caller = randomUUID();
      const decisions = await Promise.all(
        Array.from({ length: 20 }, () => limit.consume(caller)),
      ).finally(() => pool.end());

      expect(decisions.filter((decision) => decision.allowed)).toHaveLength(5);
      expect(await windowPoints(`test_window:${caller}`)).toBe(20);
    },
  );

  it("counts a request's cost all at once: what fits is allowed, what does not is refused whole", async () => {
    const limit = postgresRateLimit(testDb(), {
      name: "test_window",
      points: 5,
      windowSeconds: WINDOW_SECONDS,
    });
    const caller = randomUUID();
    expect(await limit.consume(caller, 3)).toEqual({ allowed: true });
    expect(await limit.consume(caller, 2)).toEqual({ allowed: true });
    expect(await limit.consume(caller, 1)).toMatchObject({ allowed: false });
    expect(await windowPoints(`test_window:${caller}`)).toBe(6);
    const other = randomUUID();
    expect(await limit.consume(other, 6)).toMatchObject({ allowed: false });
    // Nothing to count costs nothing and writes nothing.
    const idle = randomUUID();
    expect(await limit.consume(idle, 0)).toEqual({ allowed: true });
    expect(await windowPoints(`test_window:${idle}`)).toBe(0);
  });

  it("counts each caller in a window of its own", async () => {
    const limit = postgresRateLimit(testDb(), {
      name: "test_window",
      points: 1,
      windowSeconds: WINDOW_SECONDS,
    });
    const [one, other] = [randomUUID(), randomUUID()];
    expect(await limit.consume(one)).toEqual({ allowed: true });
    expect(await limit.consume(other)).toEqual({ allowed: true });
    expect(await limit.consume(one)).toMatchObject({ allowed: false });
  });

  it("counts nothing and writes nothing when switched off (0 points)", async () => {
    const limit = postgresRateLimit(testDb(), {
      name: "test_window",
      points: 0,
      windowSeconds: WINDOW_SECONDS,
    });
    const caller = randomUUID();
    for (let request = 0; request < 3; request += 1)
      expect(await limit.consume(caller)).toEqual({ allowed: true });
    expect(await windowPoints(`test_window:${caller}`)).toBe(0);
  });
});

describe("the ended windows' sweep", () => {
  it("deletes windows that have ended and keeps those still running", async () => {
    const [ended, running] = [`test_sweep:${randomUUID()}`, `test_sweep:${randomUUID()}`];
    await testDb().query(
      `INSERT INTO rate_limits (key, points, expire) VALUES
         ($1, 3, (extract(epoch FROM now()) * 1000)::bigint - 1000),
         ($2, 3, (extract(epoch FROM now()) * 1000)::bigint + $3::bigint)`,
      [ended, running, WINDOW_SECONDS * 1000],
    );
    expect(await deleteEndedWindows(testDb())).toBeGreaterThanOrEqual(1);
    expect(await windowPoints(ended)).toBe(0);
    expect(await windowPoints(running)).toBe(3);
  });
});
