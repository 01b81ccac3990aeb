import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import type { BrowserContext } from "@playwright/test";
import pg from "pg";
import { E2E_DATABASE_URL_FILE } from "./paths";

/**
 * The e2e specs check the database, not only the page: "one order" means one
 * row in `orders` for the browser's account.
 */
let pool: pg.Pool | undefined;

function db(): pg.Pool {
  pool ??= new pg.Pool({ connectionString: readFileSync(E2E_DATABASE_URL_FILE, "utf8").trim(), max: 2 });
  return pool;
}

export async function closeDatabase(): Promise<void> {
  await pool?.end();
  pool = undefined;
}

/** The account behind this browser's session cookie (created on its first API call). */
export async function accountIdOf(context: BrowserContext): Promise<string> {
  const session = (await context.cookies()).find((cookie) => cookie.name === "oncepay_session");
  if (!session) throw new Error("The browser has no session cookie");
  const tokenHash = createHash("sha256").update(session.value).digest("hex");
  const { rows } = await db().query<{ id: string }>(`SELECT id FROM accounts WHERE token_hash = $1`, [tokenHash]);
  if (!rows[0]) throw new Error("No account for this browser's session yet");
  return rows[0].id;
}

export async function ordersOf(accountId: string): Promise<{ id: string; total_amount: number }[]> {
  const { rows } = await db().query(`SELECT id, total_amount FROM orders WHERE account_id = $1 ORDER BY created_at`, [accountId]);
  return rows;
}

export async function paymentsOf(accountId: string): Promise<{ status: string; amount: number }[]> {
  const { rows } = await db().query(`SELECT status::text, amount FROM payments WHERE account_id = $1 ORDER BY created_at`, [accountId]);
  return rows;
}

/** The Idempotency-Keys this account used, with the order each one produced (if any). */
export async function idempotencyKeysOf(accountId: string): Promise<{ key: string; response_status: number | null; order_id: string | null }[]> {
  const { rows } = await db().query(
    `SELECT k.idem_key AS key, k.response_status, o.id AS order_id
       FROM idempotency_keys k LEFT JOIN orders o ON o.idempotency_key_id = k.id
      WHERE k.account_id = $1 ORDER BY k.created_at`,
    [accountId],
  );
  return rows;
}

/** One key's row as the server left it: in flight (`response_status` null) until its attempt completes. */
export async function keyStateOf(accountId: string, key: string): Promise<{ state: string; response_status: number | null } | null> {
  const { rows } = await db().query(
    `SELECT state::text, response_status FROM idempotency_keys WHERE account_id = $1 AND idem_key = $2`,
    [accountId, key],
  );
  return rows[0] ?? null;
}

/** The account's demo faults as stored (none stored means none on). */
export async function demoFaultsOf(accountId: string): Promise<{ networkDelayMs: number; loseResponse: boolean }> {
  const { rows } = await db().query<{ network_delay_ms: number; lose_response: boolean }>(
    `SELECT network_delay_ms, lose_response FROM demo_settings WHERE account_id = $1`,
    [accountId],
  );
  return { networkDelayMs: rows[0]?.network_delay_ms ?? 0, loseResponse: rows[0]?.lose_response ?? false };
}
