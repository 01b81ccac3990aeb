import { isIP } from "node:net";
import { SESSION_COOKIE } from "@/lib/auth/session-cookie";

/**
 * The session a request presents, read one way for pages (proxy.ts) and
 * for the API (accounts.ts).
 *
 * Cookies are not separated by port, and a sibling subdomain may set one
 * for the parent domain, so a neighbour can toss a second `oncepay_session`
 * into a shopper's browser, for a narrower path (`Path=/api`) so that it
 * reaches only some of our URLs, or for the whole domain. The browser then
 * sends both, and nothing in the Cookie header says which is ours. A reader
 * that takes the first (or the last) lets the neighbour choose: its own
 * token makes the shopper pay into the neighbour's account, a forged one
 * locks the shopper out. So a request with more than one is trusted as
 * neither.
 */
export type PresentedSession =
  | { kind: "none" }
  | { kind: "one"; token: string }
  /** More than one cookie of that name: trusted as neither. */
  | { kind: "several" };

export function presentedSession(cookieHeader: string | null, name: string): PresentedSession {
  const tokens = cookieValues(cookieHeader, name);
  if (tokens.length === 0) return { kind: "none" };
  if (tokens.length === 1) return { kind: "one", token: tokens[0]! };
  return { kind: "several" };
}

function cookieValues(header: string | null, name: string): string[] {
  if (!header) return [];
  const values: string[] = [];
  for (const part of header.split(";")) {
    const separator = part.indexOf("=");
    if (separator === -1) continue;
    if (part.slice(0, separator).trim() === name) values.push(part.slice(separator + 1).trim());
  }
  return values;
}

/** Deeper paths than this are not a place a cookie was tossed for our URLs (none is that deep). */
const MAX_PATH_SEGMENTS = 8;
/** A path we can name in a Set-Cookie attribute as it is: no `;`, space or control byte. */
const NAMEABLE_PATH = /^\/[A-Za-z0-9\-._~%!$&'()*+,=:@/]*$/;
const EXPIRED = "Max-Age=0; Expires=Thu, 01 Jan 1970 00:00:00 GMT";

/**
 * Set-Cookie values that expire every session cookie that can reach `url`
 * except our own. Ours is the only one set by this host without a Domain,
 * for Path=/ (sessionCookieOptions); a tossed one differs from it in its
 * path or its domain, and a browser expires a cookie only when both match.
 * So: each path that matches the URL's path (RFC 6265 5.1.4) but `/`, and,
 * for a named host, each domain from the host itself up to its parent
 * below the top level, with every path `/` included. (A neighbour on
 * another port that sets `Path=/` without a Domain replaces our cookie
 * outright; only the `__Host-` prefix, over HTTPS, prevents that.)
 *
 * Only for the plain name: a `__Host-` cookie can only ever be Path=/ and
 * host-only, so it cannot be tossed beside ours.
 */
export function expireTossedSessionCookies(request: { url: string; headers: Headers }): string[] {
  const url = new URL(request.url);
  const paths = matchingPaths(url.pathname);
  const expiries = paths
    .filter((path) => path !== "/")
    .map((path) => `${SESSION_COOKIE}=; Path=${path}; ${EXPIRED}`);
  for (const domain of domainsOf(hostnameOf(request.headers.get("host")) ?? url.hostname))
    for (const path of paths)
      expiries.push(`${SESSION_COOKIE}=; Domain=${domain}; Path=${path}; ${EXPIRED}`);
  return expiries;
}

/** `/api/orders` → `/`, `/api`, `/api/`, `/api/orders`: every cookie path a browser sends to it. */
function matchingPaths(pathname: string): string[] {
  const paths = ["/"];
  const segments = pathname.split("/").slice(1, 1 + MAX_PATH_SEGMENTS);
  let prefix = "";
  for (const [index, segment] of segments.entries()) {
    if (segment === "") continue;
    prefix += `/${segment}`;
    if (!NAMEABLE_PATH.test(prefix)) break;
    paths.push(prefix);
    if (index < segments.length - 1) paths.push(`${prefix}/`);
  }
  return paths;
}

/** The host the browser asked for (its cookies are this host's), as the URL parser reads a Host header. */
function hostnameOf(host: string | null): string | undefined {
  if (host === null) return undefined;
  try {
    return new URL(`http://${host}`).hostname;
  } catch {
    return undefined;
  }
}

/** `shop.example.com` → itself and `example.com`; an address has no domains. */
function domainsOf(hostname: string): string[] {
  if (isIP(hostname.replace(/^\[|\]$/g, "")) !== 0) return [];
  const labels = hostname.split(".");
  const domains: string[] = [];
  for (let start = 0; start < labels.length; start++) {
    if (labels.length - start < 2 && labels.length > 1) break;
    domains.push(labels.slice(start).join("."));
  }
  return domains;
}
