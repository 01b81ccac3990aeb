import { PROBLEM_CONTENT_TYPE } from "@/lib/http/problem-type";
import { PROBLEM_EXPLANATIONS } from "@/lib/pages/problems";
import type { Answer } from "@/lib/testing/openapi-check";

const PAGE_TYPE = /^\/problems\/([a-z0-9-]+)$/;

/**
 * Where a problem answer departs from the page its `type` names: a type
 * that is no page of the app, or a status or title other than the page's.
 * Run over every answer the tests receive (openapi-setup.ts), so each
 * problem a test meets proves its page is there and says the same.
 */
export function problemPageViolations(answer: Answer): string[] {
  const contentType = answer.headers["content-type"] ?? answer.headers["Content-Type"];
  if (typeof contentType !== "string" || !contentType.startsWith(PROBLEM_CONTENT_TYPE)) return [];
  let problem: { type?: unknown; title?: unknown; status?: unknown };
  try {
    problem = JSON.parse(answer.body) as typeof problem;
  } catch {
    return []; // The OpenAPI judge reports a body that is not JSON.
  }
  const slug = typeof problem.type === "string" ? PAGE_TYPE.exec(problem.type)?.[1] : undefined;
  if (slug === undefined || !Object.hasOwn(PROBLEM_EXPLANATIONS, slug))
    return [`problem type ${JSON.stringify(problem.type)} names no page under /problems`];
  const page = PROBLEM_EXPLANATIONS[slug]!;
  const violations: string[] = [];
  if (problem.title !== page.title)
    violations.push(
      `problem ${slug}: title ${JSON.stringify(problem.title)}, its page says ${JSON.stringify(page.title)}`,
    );
  if (problem.status !== page.status)
    violations.push(
      `problem ${slug}: status ${String(problem.status)}, its page says ${page.status}`,
    );
  return violations;
}
