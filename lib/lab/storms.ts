import { randomUUID } from "node:crypto";
import type { Database } from "@/lib/db/client";
import { serverEnv } from "@/lib/env";
import type { LabStorm } from "@/lib/generated/prisma/client";
import { z } from "zod";
import { LabRunKind, LabStrategy } from "@/lib/generated/prisma/enums";
import { FAULT_HEADER, IDEMPOTENCY_KEY_HEADER, LAB_CRASH_HEADER } from "@/lib/http/headers";
import { LAB_STORM_METADATA } from "@/lib/lab/charge-tags";
import { isLabOnly, LAB_STRATEGY_INFO, LAB_STRATEGIES, stormSizesUpTo } from "@/lib/lab/strategies";
import { tallyAtProvider, type ProviderTally } from "@/lib/ledger/provider-tally";
import { paymentProviderKey } from "@/lib/orders/provider-key";
import { PROVIDER_KEY_METADATA } from "@/lib/payments/stripe-provider";
import type { PaymentRecords } from "@/lib/payments/provider";

/**
 * A lab run, of one purchase intent (one cart, one Idempotency-Key unless
 * the strategy sends none) against one strategy: a storm (N identical
 * requests at once) or the crash scenario (one request that crashes after
 * its charge, then its retries). The server mints the intent and says
 * exactly what to send; the browser sends it; the report counts what the
 * run left behind from the server's side: orders in our tables, charges in
 * the provider's records.
 */

// One mug: every request of every storm is the same small purchase, so
// "money taken" reads as a multiple of its price.
export const STORM_CART = [{ sku: "mug-ceramic-350", quantity: 1 }] as const;
const STORM_PAYMENT_METHOD = "pm_card_visa";

// The report's shape as a schema: the OpenAPI document is made from it
// (lib/openapi), and the types are read from it.

/** What the browser sends, N times at once. */
const stormRequestSchema = z.object({
  method: z.literal("POST"),
  path: z.string(),
  headers: z.record(z.string(), z.string()),
  body: z.object({
    cartId: z.string(),
    items: z.array(z.object({ sku: z.string(), quantity: z.number().int() })),
    paymentMethod: z.string(),
  }),
});
export type StormRequest = z.infer<typeof stormRequestSchema>;

/** What the crash scenario needs besides the request: how to make its first send crash, and how long the key then stays in progress. */
const crashPlanSchema = z.object({
  header: z
    .object({ name: z.string(), value: z.string() })
    .describe("The header that makes the first request crash right after its charge."),
  inFlightExpirySeconds: z
    .number()
    .int()
    .nullable()
    .describe(
      "How long a key left in progress blocks its retries; null for a strategy that keeps no such state.",
    ),
});
export type CrashPlan = z.infer<typeof crashPlanSchema>;

export const stormReportSchema = z.object({
  object: z.literal("lab_storm"),
  id: z.uuid(),
  kind: z.enum(LabRunKind),
  strategy: z.enum(LabStrategy),
  size: z.number().int(),
  createdAt: z.iso.datetime(),
  idempotencyKey: z.string().nullable(),
  cartId: z.string(),
  request: stormRequestSchema,
  crash: crashPlanSchema.nullable().describe("The crash scenario's plan; null for a storm."),
  orders: z.number().int().describe("Orders written for the storm's cart, counted in our tables."),
  provider: z
    .discriminatedUnion("available", [
      z.object({
        available: z.literal(true),
        charges: z.number().int(),
        declined: z.number().int(),
        amountCharged: z.number().int(),
      }),
      z.object({ available: z.literal(false), detail: z.string() }),
    ])
    .describe("Charges for the storm's intent, counted in the payment provider's records."),
  currency: z.literal("usd"),
});
export type StormReport = z.infer<typeof stormReportSchema>;

/** POST /api/lab/storms: a storm {strategy, size} or the crash scenario {strategy, kind: "crash"}. */
export const newLabRunSchema = z
  .object({
    strategy: z.enum(LAB_STRATEGIES, {
      error: `strategy must be one of: ${LAB_STRATEGIES.join(", ")}`,
    }),
    kind: z
      .enum(["storm", "crash"], { error: "kind must be storm (the default) or crash" })
      .default("storm"),
    size: z.number().int("size must be a whole number").optional(),
  })
  .refine((run) => run.kind === "crash" || run.size !== undefined, {
    path: ["size"],
    message: "a storm needs a size",
  });

/** The storm sizes this server allows (LAB_MAX_STORM_SIZE). */
export function allowedStormSizes(): number[] {
  return stormSizesUpTo(serverEnv().LAB_MAX_STORM_SIZE);
}

export async function createStorm(
  db: Database,
  accountId: string,
  strategy: LabStrategy,
  run: { kind: "storm"; size: number } | { kind: "crash" },
): Promise<LabStorm> {
  return db.labStorm.create({
    data: {
      accountId,
      strategy,
      kind: run.kind,
      // The crash scenario's first request; its retries are counted by the browser.
      size: run.kind === "storm" ? run.size : 1,
      idemKey: LAB_STRATEGY_INFO[strategy].sendsKey ? randomUUID() : null,
      cartId: `cart_${randomUUID()}`,
    },
  });
}

export function stormRequest(
  storm: Pick<LabStorm, "strategy" | "idemKey" | "cartId">,
): StormRequest {
  const headers: Record<string, string> = { "Content-Type": "application/json" };
  if (storm.idemKey !== null) headers[IDEMPOTENCY_KEY_HEADER] = storm.idemKey;
  return {
    method: "POST",
    path: LAB_STRATEGY_INFO[storm.strategy].endpoint,
    headers,
    body: {
      cartId: storm.cartId,
      items: STORM_CART.map((item) => ({ ...item })),
      paymentMethod: STORM_PAYMENT_METHOD,
    },
  };
}

/**
 * The lab's own strategies crash at their crash point (LAB_CRASH_HEADER):
 * the request stops for good after the charge. The real checkout is sent
 * the after-charge fault instead: it throws there, and OncePay leaves its
 * key exactly as a crash would (in flight at payment_started, the lease
 * held), since whatever failed after the charge may have charged.
 */
export function crashPlan(strategy: LabStrategy): CrashPlan {
  const env = serverEnv();
  const expiry = LAB_STRATEGY_INFO[strategy].inFlightExpiry;
  return {
    header: isLabOnly(strategy)
      ? { name: LAB_CRASH_HEADER, value: "after-charge" }
      : { name: FAULT_HEADER, value: "after-charge" },
    inFlightExpirySeconds:
      expiry === "lease"
        ? env.IDEMPOTENCY_LEASE_SECONDS
        : expiry === "key-expiry"
          ? env.LAB_KEY_EXPIRY_SECONDS
          : null,
  };
}

/** The account's own storm, or undefined: another account's storm is as absent as one that never was. */
export async function findStorm(
  db: Database,
  accountId: string,
  stormId: string,
): Promise<LabStorm | undefined> {
  return (await db.labStorm.findFirst({ where: { id: stormId, accountId } })) ?? undefined;
}

/** The account's latest storms, newest first. */
export async function latestStorms(
  db: Database,
  accountId: string,
  limit: number,
): Promise<LabStorm[]> {
  return db.labStorm.findMany({
    where: { accountId },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take: limit,
  });
}

/**
 * The account's latest storm and latest crash run of each design, however
 * many runs came after them: at most one row per (strategy, kind), newest
 * first. The page's comparison reads these, so a design stormed early never
 * reads "not run" because later runs pushed it out of the latest list.
 */
export async function latestRunsOfEachDesign(db: Database, accountId: string): Promise<LabStorm[]> {
  // DISTINCT ON keeps the first row of each (strategy, kind) in the ORDER
  // BY, so one statement picks every pair's newest on PostgreSQL and PGlite
  // alike; id breaks a tie of created_at as latestStorms does.
  const newest = await db.$queryRaw<{ id: string }[]>`
    SELECT DISTINCT ON (strategy, kind) id::text AS id
      FROM lab_storms
     WHERE account_id = ${accountId}::uuid
     ORDER BY strategy, kind, created_at DESC, id DESC`;
  if (newest.length === 0) return [];
  return db.labStorm.findMany({
    where: { id: { in: newest.map((row) => row.id) } },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
  });
}

export async function reportStorm(
  db: Database,
  records: PaymentRecords,
  storm: LabStorm,
): Promise<StormReport> {
  const [orders, tally] = await Promise.all([
    db.order.count({ where: { accountId: storm.accountId, cartId: storm.cartId } }),
    providerTallyOf(db, records, storm),
  ]);
  return reportOf(
    storm,
    orders,
    tally.available
      ? {
          available: true,
          charges: tally.charges,
          declined: tally.declined,
          amountCharged: tally.amountCharged,
        }
      : tally,
  );
}

/** A storm just recorded: its cart and its id are new, so nothing can have been ordered or charged under them yet. */
export function unfiredStormReport(storm: LabStorm): StormReport {
  return reportOf(storm, 0, { available: true, charges: 0, declined: 0, amountCharged: 0 });
}

function reportOf(storm: LabStorm, orders: number, provider: StormReport["provider"]): StormReport {
  return {
    object: "lab_storm",
    id: storm.id,
    kind: storm.kind,
    strategy: storm.strategy,
    size: storm.size,
    createdAt: storm.createdAt.toISOString(),
    idempotencyKey: storm.idemKey,
    cartId: storm.cartId,
    request: stormRequest(storm),
    crash: storm.kind === "crash" ? crashPlan(storm.strategy) : null,
    orders,
    provider,
    currency: "usd",
  };
}

/**
 * The storm's charges at the provider. The broken strategies tag each charge
 * with the storm (LAB_STORM_METADATA). The real checkout is never asked to
 * tag anything: its charges are found under its own provider key, which
 * names the storm's request, exactly as the ledger finds any order's.
 */
async function providerTallyOf(
  db: Database,
  records: PaymentRecords,
  storm: LabStorm,
): Promise<ProviderTally> {
  if (storm.strategy !== "atomic_claim")
    return tallyAtProvider(records, { [LAB_STORM_METADATA]: storm.id });
  if (storm.idemKey === null) throw new Error(`Storm ${storm.id} of the real checkout has no key`);
  const keyRow = await db.idempotencyKey.findUnique({
    where: { scope_idemKey: { scope: storm.accountId, idemKey: storm.idemKey } },
    select: { fingerprint: true, sideEffectGeneration: true },
  });
  if (!keyRow) return { available: true, charges: 0, declined: 0, amountCharged: 0, payments: [] };
  const providerKey = paymentProviderKey(
    {
      accountId: storm.accountId,
      idempotencyKey: storm.idemKey,
      fingerprint: keyRow.fingerprint,
    },
    keyRow.sideEffectGeneration,
  );
  return tallyAtProvider(records, { [PROVIDER_KEY_METADATA]: providerKey });
}
