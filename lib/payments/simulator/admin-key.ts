import { createHash, randomBytes, timingSafeEqual } from "node:crypto";

/**
 * The admin API (`/_simulator/*`) shows every account's ledger, registers
 * accounts and injects faults that slow or fail every checkout, so it takes
 * a key of its own: `Authorization: Bearer <admin key>`. It is not an API
 * key (`sk_test_…`): those name an account and reach only its objects,
 * while the admin key reaches them all, so neither is accepted for the
 * other. Whoever starts the simulator makes the key and keeps it for its
 * tools (`npm start` keeps one in `.data/simulator-admin-key`).
 */

// A bearer token (RFC 6750's b64token), long enough that guessing is hopeless.
const ADMIN_KEY = /^[A-Za-z0-9._~+/-]{32,256}=*$/;

export const ADMIN_KEY_RULE =
  "at least 32 characters of A-Z, a-z, 0-9 and -._~+/ (32 random bytes in base64url make one)";

export function isAdminKey(key: string): boolean {
  return ADMIN_KEY.test(key);
}

/** 32 random bytes, base64url: what a starter that was given none uses. */
export function newAdminKey(): string {
  return randomBytes(32).toString("base64url");
}

/**
 * Whether `authorization` carries the admin key. Both sides are hashed
 * first, so the comparison takes the same time whatever the presented
 * value's length, and timingSafeEqual then compares them in constant time:
 * how long a refusal takes says nothing about how much of a guess was right.
 */
export function presentsAdminKey(adminKey: string, authorization: string | undefined): boolean {
  const presented = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? "")?.[1] ?? "";
  return timingSafeEqual(digest(presented), digest(adminKey));
}

function digest(text: string): Buffer {
  return createHash("sha256").update(text).digest();
}
