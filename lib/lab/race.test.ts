import { describe, expect, it } from "vitest";
import {
  crashButtonLabel,
  crashSideBySide,
  raceButtonLabel,
  raceDesigns,
  type RaceProgress,
} from "@/lib/lab/race";
import type { LabStrategy } from "@/lib/lab/strategies";

const DESIGNS: LabStrategy[] = ["no_key", "redis_key_store", "atomic_claim"];

function recorder(
  options: { available?: (strategy: LabStrategy) => boolean; failStorm?: LabStrategy } = {},
) {
  const log: string[] = [];
  const progress: RaceProgress[] = [];
  let stormsInFlight = 0;
  let maxStormsInFlight = 0;
  const pending: (() => void)[] = [];
  return {
    log,
    progress,
    maxStormsInFlight: () => maxStormsInFlight,
    steps: {
      available: options.available ?? (() => true),
      onProgress: (step: RaceProgress) => progress.push(step),
      async storm(strategy: LabStrategy) {
        stormsInFlight++;
        maxStormsInFlight = Math.max(maxStormsInFlight, stormsInFlight);
        log.push(`storm ${strategy}`);
        await Promise.resolve();
        stormsInFlight--;
        if (strategy === options.failStorm) throw new Error("403 lab strategies are off");
      },
      crash(strategy: LabStrategy) {
        log.push(`crash ${strategy}`);
        // Every crash run starts before any of them ends.
        return new Promise<void>((resolve) => {
          pending.push(resolve);
          if (pending.length === DESIGNS.length) pending.forEach((finish) => finish());
        });
      },
    },
  };
}

describe("raceDesigns", () => {
  it("storms every design one at a time, then runs every crash side by side", async () => {
    const race = recorder();
    const result = await raceDesigns(DESIGNS, race.steps);
    expect(race.log).toEqual([
      "storm no_key",
      "storm redis_key_store",
      "storm atomic_claim",
      "crash no_key",
      "crash redis_key_store",
      "crash atomic_claim",
    ]);
    expect(race.maxStormsInFlight()).toBe(1);
    expect(result).toEqual({ skipped: [], failed: [] });
  });

  it("says which design is storming, n of the runnable total, then how many crash runs are done", async () => {
    const race = recorder();
    await raceDesigns(DESIGNS, race.steps);
    expect(race.progress).toEqual([
      { phase: "storms", strategy: "no_key", index: 1, total: 3 },
      { phase: "storms", strategy: "redis_key_store", index: 2, total: 3 },
      { phase: "storms", strategy: "atomic_claim", index: 3, total: 3 },
      { phase: "crashes", done: 0, total: 3 },
      { phase: "crashes", done: 1, total: 3 },
      { phase: "crashes", done: 2, total: 3 },
      { phase: "crashes", done: 3, total: 3 },
    ]);
  });

  it("skips the designs this server does not run and races the rest", async () => {
    const race = recorder({ available: (strategy) => strategy === "atomic_claim" });
    const pendingFree = {
      ...race.steps,
      crash: async (strategy: LabStrategy) => void race.log.push(`crash ${strategy}`),
    };
    const result = await raceDesigns(DESIGNS, pendingFree);
    expect(race.log).toEqual(["storm atomic_claim", "crash atomic_claim"]);
    expect(result.skipped).toEqual(["no_key", "redis_key_store"]);
  });

  it("records a failed step and goes on with the rest", async () => {
    const race = recorder({ failStorm: "no_key" });
    const result = await raceDesigns(DESIGNS, race.steps);
    expect(result.failed).toEqual([
      { strategy: "no_key", step: "storm", message: "403 lab strategies are off" },
    ]);
    expect(race.log).toContain("storm atomic_claim");
    expect(race.log).toContain("crash atomic_claim");
  });
});

describe("crashSideBySide", () => {
  it("starts every crash run before any ends, and counts each one done as it ends, a failed one too", async () => {
    const started: LabStrategy[] = [];
    const finish = new Map<LabStrategy, () => void>();
    const progress: { done: number; total: number }[] = [];
    const all = crashSideBySide(
      DESIGNS,
      (strategy) => {
        started.push(strategy);
        return new Promise<void>((resolve, reject) =>
          finish.set(strategy, strategy === "no_key" ? () => reject(new Error("down")) : resolve),
        );
      },
      (step) => progress.push(step),
    );
    expect(started).toEqual(DESIGNS);
    expect(progress).toEqual([{ done: 0, total: 3 }]);
    finish.get("redis_key_store")!();
    finish.get("no_key")!();
    finish.get("atomic_claim")!();
    await all;
    expect(progress).toEqual([
      { done: 0, total: 3 },
      { done: 1, total: 3 },
      { done: 2, total: 3 },
      { done: 3, total: 3 },
    ]);
  });

  it("labels a long button with where its run is", () => {
    expect(crashButtonLabel({ done: 2, total: 7 })).toBe("Crash runs: 2 of 7 done…");
    expect(raceButtonLabel({ phase: "storms", strategy: "no_key", index: 3, total: 7 })).toBe(
      "Storm 3 of 7…",
    );
    expect(raceButtonLabel({ phase: "crashes", done: 0, total: 7 })).toBe(
      "Crash runs: 0 of 7 done…",
    );
  });
});
