import { canonicalJson } from "@oncepay/idempotency/request";
import type { StoredResponse } from "@oncepay/idempotency";
import { describedByLink, PROBLEM_CONTENT_TYPE } from "@/lib/http/problem-type";

/**
 * RFC 9457 problem details. Every error OncePay returns is one of these; the
 * `type` names the problem, `title` is the same for every instance of it, and
 * `detail` says what went wrong with this request.
 */
export interface ProblemDetails {
  type: string;
  title: string;
  status: number;
  detail: string;
  [extension: string]: unknown;
}

export { PROBLEM_CONTENT_TYPE, problemType } from "@/lib/http/problem-type";

/** A problem answer's own headers: its media type, and the page that explains it. */
export function problemHeaders(problem: ProblemDetails): Record<string, string> {
  return { "Content-Type": PROBLEM_CONTENT_TYPE, Link: describedByLink(problem.type) };
}

export function problemResponse(problem: ProblemDetails, headers: HeadersInit = {}): Response {
  const responseHeaders = new Headers(headers);
  for (const [name, value] of Object.entries(problemHeaders(problem)))
    responseHeaders.set(name, value);
  return new Response(canonicalJson(problem), { status: problem.status, headers: responseHeaders });
}

/** A problem as a key keeps it, to be answered now and replayed the same. */
export function storedProblem(problem: ProblemDetails): StoredResponse {
  return { status: problem.status, headers: problemHeaders(problem), body: problem };
}
