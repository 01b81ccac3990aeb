import { randomBytes } from "node:crypto";

/**
 * The browser's credential: an httpOnly cookie holding a random token. It
 * needs nothing but node:crypto so the proxy can mint it without a database.
 */
export const SESSION_COOKIE = "oncepay_session";

// 32 random bytes: guessing another shopper's session is not a strategy.
const TOKEN_BYTES = 32;

export const SESSION_TOKEN_PATTERN = /^ops_[A-Za-z0-9_-]{43}$/;
export const API_TOKEN_PATTERN = /^opk_[A-Za-z0-9_-]{43}$/;

export function mintSessionToken(): string {
  return `ops_${randomBytes(TOKEN_BYTES).toString("base64url")}`;
}

export function mintApiToken(): string {
  return `opk_${randomBytes(TOKEN_BYTES).toString("base64url")}`;
}

/** `secure`: the page was served over HTTPS, so the cookie must never travel without it. */
export function sessionCookieOptions({ secure }: { secure: boolean }) {
  return {
    httpOnly: true,
    // Lax keeps the cookie off cross-site POSTs, so another site cannot make a
    // shopper's browser place orders.
    sameSite: "lax" as const,
    secure,
    path: "/",
    maxAge: 60 * 60 * 24 * 30,
  };
}
