import { serverEnv } from "@/lib/env";
import { jsonResponse } from "@/lib/http/json";
import { openApiDocument } from "@/lib/openapi/document";

let document: unknown;

/** GET /api/openapi.json: the API's OpenAPI 3.1 document, with this server's key retention and lease. */
export async function getOpenApiDocument(): Promise<Response> {
  const env = serverEnv();
  document ??= openApiDocument({
    retentionSeconds: env.IDEMPOTENCY_TTL_SECONDS,
    leaseSeconds: env.IDEMPOTENCY_LEASE_SECONDS,
  });
  return jsonResponse(200, document, { "Cache-Control": "public, max-age=300" });
}
