import { createHash } from "node:crypto";
import type pg from "pg";
import { invalidApiKey, missingApiKey, type ApiResponse } from "@/lib/payments/simulator/errors";
import { randomBase62 } from "@/lib/payments/simulator/ids";

/**
 * Who is calling. Like Stripe, the API key goes in `Authorization: Bearer
 * sk_test_…` (what the SDKs send) or as the user name of Basic auth (what
 * `curl -u sk_test_…:` sends). Only keys the simulator knows are accepted:
 * the ones it was configured with (`SIMULATOR_API_KEYS`, each its own
 * account) and the ones registered through `POST /_simulator/api_keys` (a
 * new account with a secret and a restricted key). A well-formed key it does
 * not know is refused as Stripe refuses it, so a typo in a key is a 401, not
 * a second, empty account that silently holds the charges.
 *
 * Restricted keys (`rk_test_…`) are accepted like secret keys: at Stripe they
 * work for the calls they are granted, and every call the simulator has is
 * one a payments key is granted. Live keys are refused: nothing here moves
 * real money, and a live key in a test setup is a leak to fix, not to use.
 *
 * Only SHA-256 of a key is kept, never the key itself, in the table
 * api_keys, which several simulators on one database share. An account is
 * named by the SHA-256 of its first key (the configured key, or the secret
 * key of a registered pair), which is what the ledger shows as `account`.
 */
export type AuthResult = { ok: true; account: string } | { ok: false; response: ApiResponse };

const TEST_API_KEY = /^(sk|rk)_test_[0-9A-Za-z_]{1,247}$/;

/** A test-mode secret or restricted key in Stripe's shape (not whether it is known). */
export function isTestApiKey(key: string): boolean {
  return TEST_API_KEY.test(key);
}

export function keyDigest(apiKey: string): string {
  return createHash("sha256").update(apiKey).digest("hex");
}

export async function authenticate(
  pool: pg.Pool,
  authorization: string | undefined,
): Promise<AuthResult> {
  const presented = keyFrom(authorization);
  if (presented === undefined) return { ok: false, response: missingApiKey() };
  if (!isTestApiKey(presented)) return { ok: false, response: invalidApiKey(presented) };
  const { rows } = await pool.query<{ account: string }>(
    `SELECT account FROM payment_simulator.api_keys WHERE key_sha256 = $1`,
    [keyDigest(presented)],
  );
  if (rows.length === 0) return { ok: false, response: invalidApiKey(presented) };
  return { ok: true, account: rows[0]!.account };
}

/**
 * Makes the configured keys known, each its own account. A key already
 * known (a restart, another simulator on the same database) keeps the
 * account it has, so its objects stay where they were.
 */
export async function configureApiKeys(pool: pg.Pool, apiKeys: readonly string[]): Promise<void> {
  for (const apiKey of apiKeys) {
    if (!isTestApiKey(apiKey)) {
      throw new Error(
        `Not a test-mode API key (sk_test_… or rk_test_…, letters, digits and _): ${apiKey.slice(0, 8)}…`,
      );
    }
    const digest = keyDigest(apiKey);
    await pool.query(
      `INSERT INTO payment_simulator.api_keys (key_sha256, account) VALUES ($1, $1) ON CONFLICT (key_sha256) DO NOTHING`,
      [digest],
    );
  }
}

export interface RegisteredAccount {
  secretKey: string;
  restrictedKey: string;
}

// Stripe's own keys carry about this many random characters after the prefix.
const KEY_RANDOM_LENGTH = 99;

/** A new account, with a secret key and a restricted key for it. */
export async function registerAccount(pool: pg.Pool): Promise<RegisteredAccount> {
  const secretKey = `sk_test_${randomBase62(KEY_RANDOM_LENGTH)}`;
  const restrictedKey = `rk_test_${randomBase62(KEY_RANDOM_LENGTH)}`;
  const account = keyDigest(secretKey);
  await pool.query(
    `INSERT INTO payment_simulator.api_keys (key_sha256, account) VALUES ($1, $3), ($2, $3)`,
    [account, keyDigest(restrictedKey), account],
  );
  return { secretKey, restrictedKey };
}

function keyFrom(authorization: string | undefined): string | undefined {
  const match = /^(Bearer|Basic)\s+(\S+)\s*$/i.exec(authorization ?? "");
  if (!match) return undefined;
  if (match[1]!.toLowerCase() === "bearer") return match[2];
  const decoded = Buffer.from(match[2]!, "base64").toString("utf8");
  const user = decoded.split(":")[0];
  return user || undefined;
}
