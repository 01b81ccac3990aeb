import type { LabStrategy, OrderSource } from "@/lib/generated/prisma/enums";

export type { LabStrategy };

/**
 * The strategies the lab races against each other, as data both the server
 * and the browser read (no server code here: the lab page imports it).
 * Three are broken on purpose, each the way real code is broken; the fourth
 * is the real checkout, POST /api/orders itself.
 */
export interface LabStrategyInfo {
  id: LabStrategy;
  name: string;
  /** Where a storm of this strategy is sent. */
  endpoint: string;
  /** Whether its requests carry the storm's Idempotency-Key. */
  sendsKey: boolean;
  /** Broken on purpose: served only with demo faults on. */
  broken: boolean;
  /** What it does, in one sentence. */
  how: string;
}

// Keyed by the database's enum: a strategy added there does not compile until it is described here.
export const LAB_STRATEGY_INFO: Record<LabStrategy, LabStrategyInfo> = {
  no_key: {
    id: "no_key",
    name: "No key",
    endpoint: "/api/lab/unsafe-orders",
    sendsKey: false,
    broken: true,
    how: "Sends no Idempotency-Key: every request charges the card and writes an order.",
  },
  check_then_insert: {
    id: "check_then_insert",
    name: "Check, then insert",
    endpoint: "/api/lab/check-then-insert-orders",
    sendsKey: true,
    broken: true,
    how: "SELECTs the key; if it is absent, charges, then INSERTs the key with the order, into a table without a unique constraint.",
  },
  claim_after_charge: {
    id: "claim_after_charge",
    name: "Claim after the charge",
    endpoint: "/api/lab/claim-after-charge-orders",
    sendsKey: true,
    broken: true,
    how: "Replays a stored key, else charges first, then claims the key with INSERT … ON CONFLICT DO NOTHING and writes the order.",
  },
  atomic_claim: {
    id: "atomic_claim",
    name: "Atomic claim (OncePay)",
    endpoint: "/api/orders",
    sendsKey: true,
    broken: false,
    how: "Claims the key with INSERT … ON CONFLICT before the charge, and writes the order and the completed key in one transaction.",
  },
};

/** In the order the page shows them: the broken ones first, the real one last. */
export const LAB_STRATEGIES = Object.keys(LAB_STRATEGY_INFO) as LabStrategy[];

/** The storm sizes the lab offers, largest last; a server may cap them (LAB_MAX_STORM_SIZE). */
export const STORM_SIZES = [2, 10, 50, 200] as const;

export function stormSizesUpTo(max: number): number[] {
  return STORM_SIZES.filter((size) => size <= max);
}

export function isLabStrategy(value: unknown): value is LabStrategy {
  return typeof value === "string" && (LAB_STRATEGIES as readonly string[]).includes(value);
}

/** The lab strategy that wrote an order (its `source`), or null for the checkout's own. */
export function labStrategyOfSource(source: OrderSource): LabStrategy | null {
  return source === "checkout" ? null : (source.slice("lab_".length) as LabStrategy);
}
