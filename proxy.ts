import { NextResponse, type NextRequest } from "next/server";
import { SESSION_COOKIE, mintSessionToken, sessionCookieOptions } from "@/lib/auth/session-cookie";
import { isDevelopment } from "@/lib/env";
import { requestScheme } from "@/lib/http/request-scheme";
import { contentSecurityPolicy, newNonce } from "@/lib/http/security-headers";

/**
 * Every page load: a Content-Security-Policy with a fresh nonce (Next.js
 * reads it from the forwarded request and puts it on its scripts), and, on
 * the first page a browser loads, its session. Only a random token is minted
 * here (no database work on the request path); its account is created the
 * first time an API call presents it.
 */
export function proxy(request: NextRequest) {
  const newSession = request.cookies.has(SESSION_COOKIE) ? null : mintSessionToken();
  // Set on the forwarded request too, so the page rendered now already sees it.
  if (newSession) request.cookies.set(SESSION_COOKIE, newSession);

  const policy = contentSecurityPolicy(newNonce(), { development: isDevelopment() });
  const forwarded = new Headers(request.headers);
  forwarded.set("Content-Security-Policy", policy);
  const response = NextResponse.next({ request: { headers: forwarded } });
  response.headers.set("Content-Security-Policy", policy);
  if (newSession) {
    response.cookies.set(
      SESSION_COOKIE,
      newSession,
      sessionCookieOptions({ secure: requestScheme(request) === "https" }),
    );
    // A response that hands out a session must never be stored by a shared
    // cache, or every later visitor would get this shopper's account.
    response.headers.set("Cache-Control", "private, no-store");
  }
  return response;
}

export const config = {
  // Pages only: API clients authenticate explicitly, and static files need no session.
  matcher: ["/((?!api/|_next/|products/|favicon\\.ico|.*\\.(?:svg|png|ico|txt)$).*)"],
};
