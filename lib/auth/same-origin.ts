/**
 * A second wall against cross-site requests, behind the session cookie's
 * SameSite=Lax: a request that changes something and carries the cookie must
 * come from the shop's own pages. Browsers say where a request comes from in
 * `Sec-Fetch-Site` (every current one) and `Origin` (on every cross-origin
 * POST), and a page cannot forge either. A request with neither is not from a
 * browser, so no other site can have made it on a shopper's behalf.
 *
 * Only cookie-authenticated requests are checked: a bearer token is never
 * sent by a browser on its own, so it cannot be borrowed by another site.
 */
import { requestScheme } from "@/lib/http/request-scheme";

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

export type OriginCheck = { ok: true } | { ok: false; detail: string };

export function checkSameOrigin(request: Request): OriginCheck {
  if (SAFE_METHODS.has(request.method.toUpperCase())) return { ok: true };

  const fetchSite = request.headers.get("sec-fetch-site");
  // "none": the user typed or bookmarked it; "same-origin": our own page.
  if (fetchSite !== null) {
    return fetchSite === "same-origin" || fetchSite === "none"
      ? { ok: true }
      : refused(`Sec-Fetch-Site: ${fetchSite}`);
  }
  const origin = request.headers.get("origin");
  if (origin === null) return { ok: true };
  return origin === ownOrigin(request) ? { ok: true } : refused(`Origin: ${origin}`);
}

// The origin the browser used to reach us: the Host it sent, which a page
// cannot set, and the scheme it used.
function ownOrigin(request: Request): string {
  const host = request.headers.get("host") ?? new URL(request.url).host;
  return `${requestScheme(request)}://${host}`;
}

function refused(seen: string): OriginCheck {
  return {
    ok: false,
    detail: `This request carries the shop's session cookie but comes from another site (${seen}). Pay from the shop's own page, or use a bearer token.`,
  };
}
