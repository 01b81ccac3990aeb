import { describe, expect, it } from "vitest";
import { barPercent, chartMaximum, compareDesigns } from "@/lib/lab/comparison";
import type { StormReport } from "@/lib/lab/storms";
import type { LabStrategy } from "@/lib/lab/strategies";

function report(
  strategy: LabStrategy,
  kind: "storm" | "crash",
  orders: number,
  charges: number | null,
): StormReport {
  return {
    object: "lab_storm",
    id: `${kind}-${strategy}`,
    kind,
    strategy,
    size: kind === "storm" ? 10 : 1,
    createdAt: "2026-01-01T00:00:00.000Z",
    idempotencyKey: null,
    cartId: "cart",
    request: {
      method: "POST",
      path: "/",
      headers: {},
      body: { cartId: "cart", items: [], paymentMethod: "pm" },
    },
    crash: null,
    orders,
    provider:
      charges === null
        ? { available: false, detail: "the provider did not answer" }
        : { available: true, charges, declined: 0, amountCharged: charges * 1800 },
    currency: "usd",
  };
}

const nothing = () => undefined;

describe("compareDesigns", () => {
  it("gives every design the verdict its card gives, for its storm and its crash run", () => {
    const storms: Partial<Record<LabStrategy, StormReport>> = {
      no_key: report("no_key", "storm", 10, 10),
      check_then_insert: report("check_then_insert", "storm", 1, 1),
      atomic_claim: report("atomic_claim", "storm", 1, 1),
    };
    const crashes: Partial<Record<LabStrategy, StormReport>> = {
      redis_key_store: report("redis_key_store", "crash", 1, 2),
      atomic_claim: report("atomic_claim", "crash", 1, 1),
    };
    const rows = compareDesigns({
      latestStorm: (strategy) => storms[strategy],
      latestCrash: (strategy) => crashes[strategy],
      available: () => true,
    });
    const byStrategy = new Map(rows.map((row) => [row.strategy, row]));
    expect(byStrategy.get("no_key")).toMatchObject({
      status: "measured",
      storm: {
        stormId: "storm-no_key",
        orders: 10,
        charges: 10,
        amountCharged: 18000,
        outcome: "broke",
      },
      crash: null,
    });
    expect(byStrategy.get("check_then_insert")).toMatchObject({ storm: { outcome: "lucky" } });
    expect(byStrategy.get("redis_key_store")).toMatchObject({
      storm: null,
      crash: { stormId: "crash-redis_key_store", orders: 1, charges: 2, outcome: "broke" },
    });
    expect(byStrategy.get("atomic_claim")).toMatchObject({
      storm: { outcome: "held" },
      crash: { outcome: "held" },
    });
    expect(byStrategy.get("powertools")).toEqual({
      strategy: "powertools",
      status: "measured",
      storm: null,
      crash: null,
    });
  });

  it("says a design is unavailable only when it is switched off and has no runs to show", () => {
    const rows = compareDesigns({
      latestStorm: (strategy) =>
        strategy === "no_key" ? report("no_key", "storm", 2, 2) : undefined,
      latestCrash: nothing,
      available: (strategy) => strategy === "atomic_claim",
    });
    expect(rows.find((row) => row.strategy === "no_key")).toMatchObject({ status: "measured" });
    expect(rows.find((row) => row.strategy === "claim_after_charge")).toEqual({
      strategy: "claim_after_charge",
      status: "unavailable",
    });
    expect(rows.find((row) => row.strategy === "atomic_claim")).toMatchObject({
      status: "measured",
      storm: null,
    });
  });

  it("gives no verdict when the provider's records could not be read", () => {
    const rows = compareDesigns({
      latestStorm: (strategy) => report(strategy, "storm", 1, null),
      latestCrash: nothing,
      available: () => true,
    });
    expect(rows[0]).toMatchObject({
      storm: { orders: 1, charges: null, amountCharged: null, outcome: null },
    });
  });
});

describe("the chart's scale", () => {
  it("draws every bar against the largest count of any storm shown", () => {
    const rows = compareDesigns({
      latestStorm: (strategy) =>
        strategy === "no_key"
          ? report("no_key", "storm", 50, 50)
          : strategy === "claim_after_charge"
            ? report("claim_after_charge", "storm", 1, 6)
            : undefined,
      latestCrash: (strategy) => report(strategy, "crash", 1, 2),
      available: () => true,
    });
    expect(chartMaximum(rows)).toBe(50);
    expect(barPercent(50, 50)).toBe(100);
    expect(barPercent(6, 50)).toBe(12);
  });

  it("keeps a count of one visible beside a count of 200, and zero at zero", () => {
    expect(barPercent(1, 200)).toBe(2);
    expect(barPercent(0, 200)).toBe(0);
  });

  it("has a scale of at least one when nothing has run", () => {
    expect(chartMaximum([])).toBe(1);
  });
});
