import { NextResponse, type NextRequest } from "next/server";
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
 */
export function proxy(request: NextRequest) {
  const scheme = requestScheme(request);
  const cookieName = sessionCookieName(scheme);
  const secret = sessionSecret();
  const presented = request.cookies.get(cookieName)?.value;
  const newSession =
    presented !== undefined && isIssuedSessionToken(presented, secret)
      ? null
      : mintSessionToken(secret);
  // The page rendered now reads the session from the forwarded request, under
  // one name whatever the scheme, and only ever one this proxy checked.
  request.cookies.set(SESSION_COOKIE, newSession ?? presented!);

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
  return response;
}

export const config = {
  // Every page, whatever its path ends in (/keys/x.txt is a page): only the
  // API (its clients authenticate explicitly) and the static files skip it.
  matcher: ["/((?!api/|_next/|products/|icon\\.svg$|favicon\\.ico$).*)"],
};
