/**
 * What the cluster's balancer answers itself (lib/cluster/haproxy.ts writes
 * them as its error pages), in the app's contract: problem+json, and a
 * Retry-After wherever a retry with the same key will do. Defined here,
 * with no imports, so that the balancer's pages and the OpenAPI document,
 * which tells a client behind the balancer what it may get, say the same.
 */
export const BALANCER_PROBLEMS = {
  502: {
    slug: "bad-gateway",
    title: "Bad gateway",
    retryAfter: 1,
    detail:
      "The instance serving this request stopped before it answered. Retry with the same Idempotency-Key: it will not charge twice.",
  },
  503: {
    slug: "service-unavailable",
    title: "Service temporarily unavailable",
    retryAfter: 2,
    detail:
      "No instance is ready to serve this request (none can reach its database). Retry with the same Idempotency-Key.",
  },
  504: {
    slug: "gateway-timeout",
    title: "Gateway timeout",
    retryAfter: 1,
    detail:
      "The instance serving this request did not answer in time. Retry with the same Idempotency-Key: it will not charge twice.",
  },
  404: {
    slug: "not-found",
    title: "Not found",
    retryAfter: undefined,
    detail: "Metrics are read from each instance, not through the balancer.",
  },
} as const;

/**
 * A path with a dot segment (`.` or `..`, percent-encoded or not). The
 * balancer refuses it before it checks the path (its block on
 * /api/metrics), since Next.js resolves it and the balancer does not:
 * `/x/../api/metrics` was served the metrics. The app's front door
 * refuses it the same way (lib/http/front-door.ts).
 */
export const DOT_SEGMENT_PROBLEM = {
  status: 400,
  slug: "malformed-path",
  title: "Malformed path",
  detail:
    "The path has a dot segment (. or .., percent-encoded or not): send it resolved, as browsers do.",
} as const;

/**
 * A path segment that is `.` or `..`, in any spelling a URL parser resolves
 * (match it case-insensitively). `[.]`, not an escaped dot: HAProxy's
 * configuration reads backslashes itself.
 */
export const DOT_SEGMENT_PATTERN = "(^|/)([.]|%2e){1,2}(/|$)";
