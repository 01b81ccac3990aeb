import { NextResponse, type NextRequest } from "next/server";
import { SESSION_COOKIE, mintSessionToken, sessionCookieOptions } from "@/lib/auth/session-cookie";

/**
 * Gives a browser its session on the first page it loads. Only a random token
 * is minted here (no database work on the request path); its account is
 * created the first time an API call presents it.
 */
export function proxy(request: NextRequest) {
  if (request.cookies.has(SESSION_COOKIE)) return NextResponse.next();

  const token = mintSessionToken();
  // Set on the forwarded request too, so the page rendered now already sees it.
  request.cookies.set(SESSION_COOKIE, token);
  const response = NextResponse.next({ request: { headers: request.headers } });
  response.cookies.set(SESSION_COOKIE, token, sessionCookieOptions());
  return response;
}

export const config = {
  // Pages only: API clients authenticate explicitly, and static files need no session.
  matcher: ["/((?!api/|_next/|products/|favicon\\.ico|.*\\.(?:svg|png|ico|txt)$).*)"],
};
