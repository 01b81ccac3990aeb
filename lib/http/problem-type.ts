/**
 * How a problem+json names its problem. Apart from problem.ts, with no
 * imports, so that what runs outside the app (the cluster's balancer writes
 * its own error pages in the same shape) can use it without loading the
 * app's JSON writer.
 */
export const PROBLEM_CONTENT_TYPE = "application/problem+json";

export function problemType(slug: string): string {
  return `urn:oncepay:problem:${slug}`;
}
