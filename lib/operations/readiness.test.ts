import { describe, expect, it } from "vitest";
import { checkReadiness, sharedReadiness } from "@/lib/operations/readiness";

describe("readiness", () => {
  it("is ready when every dependency answers, with each one's time", async () => {
    const readiness = await checkReadiness([{ name: "database", probe: async () => 1 }], 100);
    expect(readiness.ready).toBe(true);
    expect(readiness.checks.database).toMatchObject({ ok: true });
  });

  it("says which dependency failed and why, by its code and first line", async () => {
    const refused = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432\n    at stack"), {
      code: "ECONNREFUSED",
    });
    const readiness = await checkReadiness(
      [
        { name: "database", probe: () => Promise.reject(refused) },
        { name: "paymentProvider", probe: async () => "ok" },
      ],
      100,
    );
    expect(readiness.ready).toBe(false);
    expect(readiness.checks.database).toMatchObject({
      ok: false,
      reason: "connect ECONNREFUSED 127.0.0.1:5432",
    });
    expect(readiness.checks.paymentProvider).toMatchObject({ ok: true });
  });

  it("gives up on a dependency that hangs, within the deadline, instead of hanging itself", async () => {
    const startedAt = Date.now();
    const readiness = await checkReadiness(
      [{ name: "database", probe: () => new Promise(() => undefined) }],
      150,
    );
    expect(Date.now() - startedAt).toBeLessThan(1000);
    expect(readiness).toEqual({
      ready: false,
      checks: {
        database: { ok: false, ms: expect.any(Number), reason: "did not answer within 150 ms" },
      },
    });
  });
});

describe("shared readiness", () => {
  function counted(answer: () => Promise<unknown> = async () => 1) {
    const probes = { started: 0 };
    const dependencies = [
      {
        name: "database",
        probe: () => {
          probes.started += 1;
          return answer();
        },
      },
    ];
    return { probes, dependencies };
  }

  it("one probe among 30 concurrent callers, and every caller gets its result", async () => {
    let release: () => void = () => undefined;
    const { probes, dependencies } = counted(
      () => new Promise<void>((resolve) => (release = resolve)),
    );
    const current = sharedReadiness({ dependencies, timeoutMs: 1000, ttlMs: 1000 });
    const answers = Array.from({ length: 30 }, () => current());
    release();
    const results = await Promise.all(answers);
    expect(probes.started).toBe(1);
    expect(new Set(results).size).toBe(1);
    expect(results[0]).toMatchObject({ ready: true, checkedAt: expect.any(Date) });
  });

  it("answers from the last probe until its TTL has passed, then probes again", async () => {
    let clock = 0;
    const { probes, dependencies } = counted();
    const told: boolean[] = [];
    const current = sharedReadiness({
      dependencies,
      timeoutMs: 1000,
      ttlMs: 1000,
      now: () => clock,
      onProbe: (result) => told.push(result.ready),
    });
    const first = await current();
    clock = 999;
    expect(await current()).toBe(first);
    clock = 1000;
    const second = await current();
    expect(second).not.toBe(first);
    expect(probes.started).toBe(2);
    expect(told).toEqual([true, true]);
  });

  it("shares a failed probe too, so a dead dependency is asked once a TTL however many ask", async () => {
    const { probes, dependencies } = counted(() =>
      Promise.reject(new Error("connect ECONNREFUSED")),
    );
    const told: boolean[] = [];
    const current = sharedReadiness({
      dependencies,
      timeoutMs: 1000,
      ttlMs: 60_000,
      onProbe: (result) => told.push(result.ready),
    });
    const results = await Promise.all(Array.from({ length: 10 }, () => current()));
    results.push(await current());
    expect(probes.started).toBe(1);
    expect(told).toEqual([false]);
    for (const result of results) expect(result.ready).toBe(false);
  });
});
