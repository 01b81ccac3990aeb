import type { LabStrategy, OrderSource } from "@/lib/generated/prisma/enums";

export type { LabStrategy };

/**
 * The strategies the lab races against each other, as data both the server
 * and the browser read (no server code here: the lab page imports it).
 * Three are broken on purpose, each the way real code is broken; three are
 * the designs the common guides teach, with a key store of their own; the
 * last is the real checkout, POST /api/orders itself.
 */
export type StrategyKind = "broken" | "copied" | "real";

/**
 * What bounds how long a key stays in progress after a crash: nothing
 * (the strategy keeps no in-progress state), the copied designs' expiry
 * (LAB_KEY_EXPIRY_SECONDS), or OncePay's lease (IDEMPOTENCY_LEASE_SECONDS).
 */
export type InFlightExpiry = "none" | "key-expiry" | "lease";

export interface LabStrategyInfo {
  id: LabStrategy;
  name: string;
  kind: StrategyKind;
  /** Where a storm of this strategy is sent. */
  endpoint: string;
  /** Whether its requests carry the storm's Idempotency-Key. */
  sendsKey: boolean;
  inFlightExpiry: InFlightExpiry;
  /** What it does, in one sentence. */
  how: string;
}

// Keyed by the database's enum: a strategy added there does not compile until it is described here.
export const LAB_STRATEGY_INFO: Record<LabStrategy, LabStrategyInfo> = {
  no_key: {
    id: "no_key",
    name: "No key",
    kind: "broken",
    endpoint: "/api/lab/unsafe-orders",
    sendsKey: false,
    inFlightExpiry: "none",
    how: "Sends no Idempotency-Key: every request charges the card and writes an order.",
  },
  check_then_insert: {
    id: "check_then_insert",
    name: "Check, then insert",
    kind: "broken",
    endpoint: "/api/lab/check-then-insert-orders",
    sendsKey: true,
    inFlightExpiry: "none",
    how: "SELECTs the key; if it is absent, charges, then INSERTs the key with the order, into a table without a unique constraint.",
  },
  claim_after_charge: {
    id: "claim_after_charge",
    name: "Claim after the charge",
    kind: "broken",
    endpoint: "/api/lab/claim-after-charge-orders",
    sendsKey: true,
    inFlightExpiry: "none",
    how: "Replays a stored key, else charges first, then claims the key with INSERT … ON CONFLICT DO NOTHING and writes the order.",
  },
  dynamodb_key_store: {
    id: "dynamodb_key_store",
    name: "Separate key store (DynamoDB)",
    kind: "copied",
    endpoint: "/api/lab/dynamodb-orders",
    sendsKey: true,
    inFlightExpiry: "key-expiry",
    how: "Reserves the key with a conditional put of an IN_PROGRESS item (attribute_not_exists), charges, writes the order to its own database, then updates the item to COMPLETED with the response.",
  },
  redis_key_store: {
    id: "redis_key_store",
    name: "Separate key store (Redis)",
    kind: "copied",
    endpoint: "/api/lab/redis-orders",
    sendsKey: true,
    inFlightExpiry: "key-expiry",
    how: "Reserves the key with SET NX and an expiry, charges, writes the order to its own database, then stores the response under the key.",
  },
  powertools: {
    id: "powertools",
    name: "Powertools (DynamoDB)",
    kind: "copied",
    endpoint: "/api/lab/powertools-orders",
    sendsKey: true,
    inFlightExpiry: "key-expiry",
    how: "AWS Lambda Powertools' makeIdempotent wraps the checkout, keyed on the Idempotency-Key, with its DynamoDB persistence layer and payload validation. Outside Lambda it is given a context that says the time left (the key expiry); without one it sets no in-progress expiry, and a crashed key would block for a day.",
  },
  atomic_claim: {
    id: "atomic_claim",
    name: "Atomic claim (OncePay)",
    kind: "real",
    endpoint: "/api/orders",
    sendsKey: true,
    inFlightExpiry: "lease",
    how: "Claims the key with INSERT … ON CONFLICT before the charge, and writes the order and the completed key in one transaction.",
  },
};

/** The lab's own endpoints: every strategy but the real checkout, served only with demo faults on. */
export function isLabOnly(strategy: LabStrategy): boolean {
  return LAB_STRATEGY_INFO[strategy].kind !== "real";
}

/** In the order the page shows them: the broken ones, the copied designs, the real one. */
export const LAB_STRATEGIES = Object.keys(LAB_STRATEGY_INFO) as LabStrategy[];

/** The storm sizes the lab offers, largest last; a server may cap them (LAB_MAX_STORM_SIZE). */
export const STORM_SIZES = [2, 10, 50, 200] as const;

export function stormSizesUpTo(max: number): number[] {
  return STORM_SIZES.filter((size) => size <= max);
}

export function isLabStrategy(value: unknown): value is LabStrategy {
  return typeof value === "string" && (LAB_STRATEGIES as readonly string[]).includes(value);
}

/** The lab strategy that wrote an order (its `source`), or null for the checkout's own (and the webhook storms', no checkout's). */
export function labStrategyOfSource(source: OrderSource): LabStrategy | null {
  if (source === "checkout" || source === "lab_webhooks") return null;
  return source.slice("lab_".length) as LabStrategy;
}
