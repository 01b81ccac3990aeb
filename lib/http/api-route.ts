import { isDatabaseUnavailable } from "@oncepay/idempotency";
import {
  API_METHODS,
  methodNotAllowed,
  optionsResponse,
  type ApiMethod,
  type Handler,
} from "@/lib/http/api-methods";
import { IDEMPOTENT_REPLAYED_HEADER, REQUEST_ID_HEADER } from "@/lib/http/headers";
import { requestIdFor } from "@/lib/http/request-id";
import { serverProblemResponse } from "@/lib/http/server-problems";
import { errorFields, log } from "@/lib/log";
import { runWithContext } from "@/lib/observability/request-context";

/**
 * Wraps every API route handler: gives each attempt its X-Request-Id (per
 * attempt, unlike the Idempotency-Key, which is per intent: the balancer's,
 * or a new one) and runs it in a request context that every log line of the
 * attempt carries, turns an unexpected throw into a problem+json 500 (or 503
 * when the database is unreachable), and logs one line per request.
 */
export function apiRoute<Rest extends unknown[]>(
  handler: (request: Request, ...rest: Rest) => Promise<Response>,
): (request: Request, ...rest: Rest) => Promise<Response> {
  return (request, ...rest) => {
    const requestId = requestIdFor(request);
    return runWithContext({ requestId }, () => handleLogged(requestId, handler, request, ...rest));
  };
}

async function handleLogged<Rest extends unknown[]>(
  requestId: string,
  handler: (request: Request, ...rest: Rest) => Promise<Response>,
  request: Request,
  ...rest: Rest
): Promise<Response> {
  const startedAt = performance.now();
  let response: Response;
  try {
    response = await handler(request, ...rest);
  } catch (error) {
    const unavailable = isDatabaseUnavailable(error);
    log.error(
      unavailable ? "http.database_unavailable" : "http.unhandled_error",
      errorFields(error),
    );
    response = serverProblemResponse(unavailable ? "database-unavailable" : "internal-error");
  }
  response.headers.set(REQUEST_ID_HEADER, requestId);
  const path = new URL(request.url).pathname;
  (PROBE_PATHS.has(path) ? log.debug : log.info)("http.request", {
    method: request.method,
    path,
    status: response.status,
    replayed: response.headers.get(IDEMPOTENT_REPLAYED_HEADER) === "true",
    ms: Math.round(performance.now() - startedAt),
  });
  return response;
}

// The balancer checks every instance every second and Prometheus scrapes it:
// at info, their lines would bury the requests people came for.
const PROBE_PATHS = new Set(["/api/health", "/api/ready", "/api/metrics"]);

type RouteMethods<Rest extends unknown[]> = Record<ApiMethod | "OPTIONS", Handler<Rest>>;

/**
 * All of a route's method handlers, each through apiRoute: the ones given,
 * and a 405 (with Allow, X-Request-Id and problem+json) for every other, so
 * a route file reads
 *
 *   export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = apiMethods({ POST: createOrder });
 *
 * HEAD is left to Next.js, which answers it from GET (so a 405 where GET is one).
 */
export function apiMethods<Rest extends unknown[]>(
  served: Partial<Record<ApiMethod, Handler<Rest>>>,
): RouteMethods<Rest> {
  const names = API_METHODS.filter((method) => served[method] !== undefined);
  const notServed: Handler<Rest> = async (...[request]) => methodNotAllowed(request.method, names);
  const route = Object.fromEntries(
    API_METHODS.map((method) => [method, apiRoute(served[method] ?? notServed)]),
  ) as Record<ApiMethod, Handler<Rest>>;
  const options: Handler<Rest> = async () => optionsResponse(names);
  return { ...route, OPTIONS: apiRoute(options) };
}
