import { z } from "zod";
import { serverEnv } from "@/lib/env";
import { problemResponse, problemType } from "@/lib/http/problem";
import type { Queryable } from "@/lib/db/sql";
import type { PrismaClient } from "@/lib/generated/prisma/client";

/**
 * The demo faults one account has switched on. They make the failures people
 * come to see (a slow network, a lost response) happen on the server, for
 * that account only, and only when the server runs with DEMO_FAULTS=on.
 */
export interface DemoSettings {
  /** Hold each first-time checkout this long after claiming its key, before charging. */
  networkDelayMs: number;
  /**
   * Commit the next first-time checkout, then drop the connection without
   * answering. One-shot: it switches itself off when used, as a real lost
   * packet would not follow the retry.
   */
  loseResponse: boolean;
}

// Long enough to outlast any client attempt timeout; short enough that a
// forgotten setting cannot tie up a server connection for long.
export const MAX_NETWORK_DELAY_MS = 20_000;

export const demoSettingsSchema = z.object({
  networkDelayMs: z.number().int().min(0).max(MAX_NETWORK_DELAY_MS),
  loseResponse: z.boolean(),
});

/** What GET and PUT /api/demo/settings answer: the account's faults, and whether the server allows any. */
export const demoSettingsViewSchema = demoSettingsSchema.extend({
  faultsEnabled: z.boolean().describe("Whether this server allows demo faults (DEMO_FAULTS=on)."),
});
export type DemoSettingsView = z.infer<typeof demoSettingsViewSchema>;

export const NO_DEMO_FAULTS: DemoSettings = Object.freeze({
  networkDelayMs: 0,
  loseResponse: false,
});

export function demoFaultsEnabled(): boolean {
  return serverEnv().DEMO_FAULTS === "on";
}

/**
 * The 403 of every demo-fault endpoint on a server started without
 * DEMO_FAULTS=on: one problem type, so a client can tell "demo faults are
 * off here" from any other refusal. `detail` says what was refused.
 */
export function demoFaultsDisabledResponse(detail: string): Response {
  return problemResponse({
    type: problemType("demo-faults-disabled"),
    title: "Demo faults are disabled",
    status: 403,
    detail,
  });
}

/**
 * The account's settings; always none when demo faults are off (no database
 * read then). Plain SQL, as a first-time checkout reads them on its way to
 * the charge.
 */
export async function demoSettingsFor(db: Queryable, accountId: string): Promise<DemoSettings> {
  if (!demoFaultsEnabled()) return NO_DEMO_FAULTS;
  const { rows } = await db.query<DemoSettings>(
    `SELECT network_delay_ms AS "networkDelayMs", lose_response AS "loseResponse"
       FROM demo_settings WHERE account_id = $1::uuid`,
    [accountId],
  );
  return rows[0] ?? NO_DEMO_FAULTS;
}

export async function saveDemoSettings(
  db: PrismaClient,
  accountId: string,
  settings: DemoSettings,
): Promise<DemoSettings> {
  return db.demoSettings.upsert({
    where: { accountId },
    create: { accountId, ...settings },
    update: settings,
    select: { networkDelayMs: true, loseResponse: true },
  });
}

/**
 * Uses up the account's "lose the next response" setting, if it is on. The
 * conditional UPDATE makes it fire once even when two requests finish together.
 */
export async function takeLostResponse(db: PrismaClient, accountId: string): Promise<boolean> {
  if (!demoFaultsEnabled()) return false;
  const { count } = await db.demoSettings.updateMany({
    where: { accountId, loseResponse: true },
    data: { loseResponse: false },
  });
  return count === 1;
}
