import { serverEnv } from "@/lib/env";
import { jsonResponse } from "@/lib/http/json";
import { openApiDocument, type JsonObject, type KeyPolicy } from "@/lib/openapi/document";

let document: JsonObject | undefined;

/** This server's key retention and lease, as its document states them. */
function serverKeyPolicy(): KeyPolicy {
  const env = serverEnv();
  return {
    retentionSeconds: env.IDEMPOTENCY_TTL_SECONDS,
    leaseSeconds: env.IDEMPOTENCY_LEASE_SECONDS,
    maxWaitSeconds: env.KEY_WAIT_MAX_SECONDS,
  };
}

/** The document this server publishes: made once, since nothing in it changes while it runs. */
export function publishedOpenApiDocument(): JsonObject {
  document ??= openApiDocument(serverKeyPolicy());
  return document;
}

/** GET /api/openapi.json: the API's OpenAPI 3.1 document, with this server's key retention and lease. */
export async function getOpenApiDocument(): Promise<Response> {
  return jsonResponse(200, publishedOpenApiDocument(), { "Cache-Control": "public, max-age=300" });
}
