import { describe, expect, it } from "vitest";
import { latestRun, mergeRuns, newerFirst } from "@/lib/lab/latest-runs";
import type { StormReport } from "@/lib/lab/storms";
import type { LabStrategy } from "@/lib/lab/strategies";

let sequence = 0;
function run(
  strategy: LabStrategy,
  kind: StormReport["kind"],
  second: number,
  extra: Partial<StormReport> = {},
): StormReport {
  sequence++;
  return {
    id: `00000000-0000-4000-8000-${String(sequence).padStart(12, "0")}`,
    strategy,
    kind,
    createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, second)).toISOString(),
    orders: 0,
    ...extra,
  } as StormReport;
}

describe("each design's latest run", () => {
  it("finds a design's storm stormed before twenty later runs of other designs", () => {
    const early = run("atomic_claim", "storm", 0);
    const later = Array.from({ length: 25 }, (_, i) => run("no_key", "storm", i + 1));
    const latestTwenty = [...later].sort(newerFirst).slice(0, 20);
    expect(latestRun(latestTwenty, "atomic_claim", "storm")).toBeUndefined();
    const known = mergeRuns([early], latestTwenty);
    expect(latestRun(known, "atomic_claim", "storm")?.id).toBe(early.id);
    expect(latestRun(known, "no_key", "storm")?.id).toBe(later.at(-1)!.id);
  });

  it("keeps a design's storm and its crash run apart", () => {
    const storm = run("redis_key_store", "storm", 1);
    const crash = run("redis_key_store", "crash", 2);
    expect(latestRun([crash, storm], "redis_key_store", "storm")?.id).toBe(storm.id);
    expect(latestRun([storm, crash], "redis_key_store", "crash")?.id).toBe(crash.id);
    expect(latestRun([storm, crash], "powertools", "crash")).toBeUndefined();
  });

  it("picks the newest whatever the order it is given in, and breaks a tie of time by id as the server does", () => {
    const older = run("check_then_insert", "storm", 5);
    const newer = run("check_then_insert", "storm", 9);
    const sameTimeLowerId = run("no_key", "crash", 3);
    const sameTimeHigherId = run("no_key", "crash", 3);
    expect(latestRun([older, newer], "check_then_insert", "storm")?.id).toBe(newer.id);
    expect(latestRun([newer, older], "check_then_insert", "storm")?.id).toBe(newer.id);
    expect(latestRun([sameTimeHigherId, sameTimeLowerId], "no_key", "crash")?.id).toBe(
      sameTimeHigherId.id,
    );
    expect(latestRun([sameTimeLowerId, sameTimeHigherId], "no_key", "crash")?.id).toBe(
      sameTimeHigherId.id,
    );
  });

  it("merges lists into each run once, newest first, the last list's copy winning", () => {
    const a = run("no_key", "storm", 1);
    const b = run("powertools", "crash", 2);
    const bRead = { ...b, orders: 1 };
    const merged = mergeRuns([a, b], [bRead]);
    expect(merged.map((report) => report.id)).toEqual([b.id, a.id]);
    expect(merged[0]!.orders).toBe(1);
  });
});
