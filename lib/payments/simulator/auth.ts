import { createHash } from "node:crypto";
import { invalidApiKey, missingApiKey, type ApiResponse } from "@/lib/payments/simulator/errors";

/**
 * Who is calling. Like Stripe, the secret key goes in `Authorization: Bearer
 * sk_test_…` (what the SDKs send) or as the user name of Basic auth (what
 * `curl -u sk_test_…:` sends). Any well-formed test-mode secret key is
 * accepted and is its own account: the simulator needs no sign-up, and
 * distinct keys never see or collide with each other's objects and
 * idempotency keys. Live keys are refused: nothing here moves real money,
 * and a live key in a test setup is a leak to fix, not to use.
 *
 * Only the key's SHA-256 is kept (`account`), never the key itself.
 */
export type AuthResult = { ok: true; account: string } | { ok: false; response: ApiResponse };

const TEST_SECRET_KEY = /^sk_test_[0-9A-Za-z_]{1,247}$/;

export function authenticate(authorization: string | undefined): AuthResult {
  const secret = secretFrom(authorization);
  if (secret === undefined) return { ok: false, response: missingApiKey() };
  if (!TEST_SECRET_KEY.test(secret)) return { ok: false, response: invalidApiKey(secret) };
  return { ok: true, account: accountOf(secret) };
}

export function accountOf(secretKey: string): string {
  return createHash("sha256").update(secretKey).digest("hex");
}

function secretFrom(authorization: string | undefined): string | undefined {
  const match = /^(Bearer|Basic)\s+(\S+)\s*$/i.exec(authorization ?? "");
  if (!match) return undefined;
  if (match[1]!.toLowerCase() === "bearer") return match[2];
  const decoded = Buffer.from(match[2]!, "base64").toString("utf8");
  const user = decoded.split(":")[0];
  return user || undefined;
}
