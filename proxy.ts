import { NextResponse, type NextRequest } from "next/server";
import { expireTossedSessionCookies, presentedSession } from "@/lib/auth/presented-session";
import {
  SESSION_COOKIE,
  isIssuedSessionToken,
  mintSessionToken,
  sessionCookieName,
  sessionCookieOptions,
} from "@/lib/auth/session-cookie";
import { isDevelopment, sessionSecret } from "@/lib/env";
import { requestScheme } from "@/lib/http/request-scheme";
import { contentSecurityPolicy, newNonce } from "@/lib/http/security-headers";

/**
 * Every page load: a Content-Security-Policy with a fresh nonce (Next.js
 * reads it from the forwarded request and puts it on its scripts), and a
 * session the server signed: a browser without one, or with a cookie the
 * server never issued (planted, tossed, or from an old secret), gets a new
 * one. Only a token is minted here (no database work on the request path);
 * its account is created the first time an API call presents it.
 *
 * A browser that sends more than one session cookie (a neighbour tossed
 * one: lib/auth/presented-session.ts) is trusted as neither: this page is
 * rendered without a session, nothing is minted (that would replace ours),
 * and the answer expires the tossed ones, so the next load has ours alone.
 */
export function proxy(request: NextRequest) {
  const scheme = requestScheme(request);
  const cookieName = sessionCookieName(scheme);
  const secret = sessionSecret();
  const presented = presentedSession(request.headers.get("cookie"), cookieName);
  const tossed = presented.kind === "several";
  const kept =
    presented.kind === "one" && isIssuedSessionToken(presented.token, secret)
      ? presented.token
      : undefined;
  const newSession = tossed || kept ? undefined : mintSessionToken(secret);
  // The page rendered now reads the session from the forwarded request, under
  // one name whatever the scheme, and only ever one this proxy checked.
  const pageSession = kept ?? newSession;
  if (pageSession === undefined) request.cookies.delete(SESSION_COOKIE);
  else request.cookies.set(SESSION_COOKIE, pageSession);

  const policy = contentSecurityPolicy(newNonce(), { development: isDevelopment() });
  const forwarded = new Headers(request.headers);
  forwarded.set("Content-Security-Policy", policy);
  const response = NextResponse.next({ request: { headers: forwarded } });
  response.headers.set("Content-Security-Policy", policy);
  if (newSession) {
    response.cookies.set(
      cookieName,
      newSession,
      sessionCookieOptions({ secure: scheme === "https" }),
    );
    // A response that hands out a session must never be stored by a shared
    // cache, or every later visitor would get this shopper's account.
    response.headers.set("Cache-Control", "private, no-store");
  }
  if (tossed) {
    for (const cookie of expireTossedSessionCookies(request))
      response.headers.append("Set-Cookie", cookie);
    response.headers.set("Cache-Control", "private, no-store");
  }
  return response;
}

export const config = {
  // Every page, whatever its path ends in (/keys/x.txt is a page): only the
  // API (its clients authenticate explicitly) and the static files skip it.
  matcher: ["/((?!api/|_next/|products/|icon\\.svg$|favicon\\.ico$).*)"],
};
