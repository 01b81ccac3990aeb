import { randomUUID } from "node:crypto";
import { isDatabaseUnavailable } from "@/lib/db/errors";
import { IDEMPOTENT_REPLAYED_HEADER, REQUEST_ID_HEADER } from "@/lib/http/headers";
import { serverProblemResponse } from "@/lib/http/server-problems";
import { errorFields, log } from "@/lib/log";

/**
 * Wraps every API route handler: gives each attempt a fresh X-Request-Id (per
 * attempt, unlike the Idempotency-Key, which is per intent), turns an
 * unexpected throw into a problem+json 500 (or 503 when the database is
 * unreachable), and logs one line per request.
 */
export function apiRoute<Rest extends unknown[]>(
  handler: (request: Request, ...rest: Rest) => Promise<Response>,
): (request: Request, ...rest: Rest) => Promise<Response> {
  return async (request, ...rest) => {
    const requestId = randomUUID();
    const startedAt = performance.now();
    let response: Response;
    try {
      response = await handler(request, ...rest);
    } catch (error) {
      const unavailable = isDatabaseUnavailable(error);
      log.error(unavailable ? "http.database_unavailable" : "http.unhandled_error", { requestId, ...errorFields(error) });
      response = serverProblemResponse(unavailable ? "database-unavailable" : "internal-error");
    }
    response.headers.set(REQUEST_ID_HEADER, requestId);
    log.info("http.request", {
      requestId,
      method: request.method,
      path: new URL(request.url).pathname,
      status: response.status,
      replayed: response.headers.get(IDEMPOTENT_REPLAYED_HEADER) === "true",
      ms: Math.round(performance.now() - startedAt),
    });
    return response;
  };
}
