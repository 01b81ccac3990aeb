/**
 * The browser-facing security headers. Imports nothing, so that both
 * next.config.ts (headers on every response) and proxy.ts (the per-request
 * Content-Security-Policy of pages) can use it.
 */

/** On every response, pages and API alike. */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  // Never guess a content type: a JSON answer must not be run as a script.
  "X-Content-Type-Options": "nosniff",
  // Other sites learn at most our origin, never a page's path or query.
  "Referrer-Policy": "strict-origin-when-cross-origin",
  // The shop needs none of these; a script that got in cannot ask for them.
  "Permissions-Policy": "camera=(), microphone=(), geolocation=(), usb=(), payment=()",
  // For browsers that predate CSP's frame-ancestors: the Pay page is never framed.
  "X-Frame-Options": "DENY",
};

/**
 * A page's Content-Security-Policy. Scripts run only with this response's
 * nonce ('strict-dynamic' lets those load Next.js's own chunks), so an
 * injected script does not run; nothing may frame the page, so nobody can
 * overlay the Pay button (clickjacking). Styles allow inline ones: React and
 * Next.js set style attributes, and a style cannot pay. Development adds
 * what the dev server's hot reload needs (eval and its websocket).
 */
export function contentSecurityPolicy(
  nonce: string,
  { development }: { development: boolean },
): string {
  const directives = [
    "default-src 'self'",
    `script-src 'self' 'nonce-${nonce}' 'strict-dynamic'${development ? " 'unsafe-eval'" : ""}`,
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self'",
    `connect-src 'self'${development ? " ws: wss:" : ""}`,
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ];
  return directives.join("; ");
}

/** 128 random bits, base64: a nonce an injected script cannot guess. */
export function newNonce(): string {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return btoa(String.fromCharCode(...bytes));
}
