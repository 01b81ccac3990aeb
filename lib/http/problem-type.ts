/**
 * How a problem+json names its problem. Apart from problem.ts, with no
 * imports, so that what runs outside the app (the cluster's balancer writes
 * its own error pages in the same shape) can use it without loading the
 * app's JSON writer.
 */
export const PROBLEM_CONTENT_TYPE = "application/problem+json";

/**
 * A problem's `type`: the path of the app's page that explains it (what
 * happened, what to do), a URI reference that resolves against the API's
 * own origin, so the same type names the same problem on every host.
 */
export function problemType(slug: string): string {
  return `/problems/${slug}`;
}

/** The Link field (RFC 8288) that points a client at the page explaining a problem. */
export function describedByLink(type: string): string {
  return `<${type}>; rel="describedby"; type="text/html"`;
}
