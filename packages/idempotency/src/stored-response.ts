import { IDEMPOTENT_REPLAYED_HEADER } from "./headers.js";
import { canonicalJson } from "./canonical-json.js";

/**
 * A response as it is kept with its key and replayed: the status, the headers
 * that belong to the result (not per-attempt ones such as X-Request-Id), and
 * a JSON body. Both the first response and every replay are built from this,
 * so they are the same bytes.
 */
export interface StoredResponse {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

export function toHttpResponse(stored: StoredResponse, options: { replayed: boolean }): Response {
  const headers = new Headers(stored.headers);
  if (options.replayed) headers.set(IDEMPOTENT_REPLAYED_HEADER, "true");
  return new Response(canonicalJson(stored.body), { status: stored.status, headers });
}
