import { describe, expect, it } from "vitest";
import { checkReadiness } from "@/lib/operations/readiness";

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
