import canonicalize from "canonicalize";

/**
 * JSON with object keys sorted (RFC 8785). A stored response body goes through
 * PostgreSQL's jsonb, which reorders keys; serialising both the first response
 * and its replays canonically is what makes a replay byte-for-byte identical.
 */
export function canonicalJson(value: unknown): string {
  const text = canonicalize(value);
  if (text === undefined) throw new TypeError("Value cannot be represented as JSON");
  return text;
}

/** A canonical JSON response; a Content-Type in `headers` (such as application/problem+json) is kept. */
export function jsonResponse(status: number, body: unknown, headers: HeadersInit = {}): Response {
  const responseHeaders = new Headers(headers);
  if (!responseHeaders.has("Content-Type")) responseHeaders.set("Content-Type", "application/json");
  return new Response(canonicalJson(body), { status, headers: responseHeaders });
}
