import { canonicalJson } from "@oncepay/idempotency/request";

/** A canonical JSON response; a Content-Type in `headers` (such as application/problem+json) is kept. */
export function jsonResponse(status: number, body: unknown, headers: HeadersInit = {}): Response {
  const responseHeaders = new Headers(headers);
  if (!responseHeaders.has("Content-Type")) responseHeaders.set("Content-Type", "application/json");
  return new Response(canonicalJson(body), { status, headers: responseHeaders });
}
