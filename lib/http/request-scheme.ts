/**
 * The scheme the browser used to reach us: the request URL's, unless a proxy
 * in front (a load balancer that terminates TLS) says otherwise in
 * X-Forwarded-Proto; the first value is the client-facing hop. Imports
 * nothing, so proxy.ts can use it on every page load.
 */
export function requestScheme(request: { url: string; headers: Headers }): "https" | "http" {
  const forwarded = request.headers.get("x-forwarded-proto")?.split(",")[0]?.trim();
  if (forwarded === "https" || forwarded === "http") return forwarded;
  return new URL(request.url).protocol === "https:" ? "https" : "http";
}
