import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

/**
 * The browser's credential: an httpOnly cookie holding a token only the
 * server mints: 32 random bytes and their HMAC under the session secret. A
 * token the server did not sign is never an account (a cookie planted by a
 * sibling site, say), and the proxy replaces it on the next page load. It
 * needs nothing but node:crypto, so the proxy can mint and check it without
 * a database.
 */
export const SESSION_COOKIE = "oncepay_session";

/**
 * Over HTTPS the cookie carries the `__Host-` prefix: the browser then keeps
 * it only if this host set it, Secure, for the whole site, so no sibling
 * subdomain can plant one.
 */
export const HOST_SESSION_COOKIE = `__Host-${SESSION_COOKIE}`;

export function sessionCookieName(scheme: "https" | "http"): string {
  return scheme === "https" ? HOST_SESSION_COOKIE : SESSION_COOKIE;
}

// 32 random bytes: guessing another shopper's session is not a strategy.
const TOKEN_BYTES = 32;

const SESSION_TOKEN_PATTERN = /^ops_([A-Za-z0-9_-]{43})\.([A-Za-z0-9_-]{43})$/;
export const API_TOKEN_PATTERN = /^opk_[A-Za-z0-9_-]{43}$/;

function signature(nonce: string, secret: string): Buffer {
  return createHmac("sha256", secret).update(`oncepay-session:${nonce}`).digest();
}

export function mintSessionToken(secret: string): string {
  const nonce = randomBytes(TOKEN_BYTES).toString("base64url");
  return `ops_${nonce}.${signature(nonce, secret).toString("base64url")}`;
}

/** Whether the server minted this token: its form, and its signature (compared in constant time). */
export function isIssuedSessionToken(token: string, secret: string): boolean {
  const match = SESSION_TOKEN_PATTERN.exec(token);
  if (!match) return false;
  const given = Buffer.from(match[2]!, "base64url");
  const expected = signature(match[1]!, secret);
  return given.length === expected.length && timingSafeEqual(given, expected);
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
