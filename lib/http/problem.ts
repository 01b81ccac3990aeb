import { canonicalJson } from "@oncepay/idempotency/request";
import { PROBLEM_CONTENT_TYPE } from "@/lib/http/problem-type";

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

export function problemResponse(problem: ProblemDetails, headers: HeadersInit = {}): Response {
  const responseHeaders = new Headers(headers);
  responseHeaders.set("Content-Type", PROBLEM_CONTENT_TYPE);
  return new Response(canonicalJson(problem), { status: problem.status, headers: responseHeaders });
}
