import { describe, expect, it } from "vitest";
import { PROBLEMS as ENGINE_PROBLEMS } from "@oncepay/idempotency/fetch";
import { BALANCER_PROBLEMS, DOT_SEGMENT_PROBLEM } from "@/lib/http/balancer-problems";
import { problemType } from "@/lib/http/problem-type";
import { REQUEST_PROBLEMS } from "@/lib/http/request-problems";
import { SERVER_PROBLEMS } from "@/lib/http/server-problems";
import { openApiDocument } from "@/lib/openapi/document";
import { PROBLEM_EXPLANATIONS, problemIndexView, problemPageView } from "@/lib/pages/problems";

/** Every problem `type` the OpenAPI document says an answer may carry, with its status. */
function documentedTypes(): Map<string, number> {
  const document = openApiDocument({
    retentionSeconds: 86_400,
    leaseSeconds: 30,
    maxWaitSeconds: 10,
  }) as {
    paths: Record<string, Record<string, { responses: Record<string, ProblemResponse> }>>;
  };
  const types = new Map<string, number>();
  for (const path of Object.values(document.paths))
    for (const operation of Object.values(path))
      for (const [status, response] of Object.entries(operation.responses)) {
        const schema = response.content?.["application/problem+json"]?.schema;
        for (const type of schema?.allOf[1]?.properties.type.enum ?? [])
          types.set(type, Number(status));
      }
  return types;
}

interface ProblemResponse {
  content?: Record<
    string,
    { schema: { allOf: [unknown, { properties: { type: { enum: string[] } } }] } }
  >;
}

describe("the problem pages", () => {
  it("explain every problem the API document names, with its status, and nothing else", () => {
    const documented = documentedTypes();
    expect(documented.size).toBeGreaterThan(30);
    const explained = new Map(
      Object.entries(PROBLEM_EXPLANATIONS).map(([slug, page]) => [problemType(slug), page.status]),
    );
    expect(explained).toEqual(documented);
  });

  it("carry the title each problem is answered with", () => {
    const tables = [
      ...Object.values(ENGINE_PROBLEMS),
      ...Object.values(REQUEST_PROBLEMS),
      ...Object.values(SERVER_PROBLEMS),
      ...Object.values(BALANCER_PROBLEMS),
      DOT_SEGMENT_PROBLEM,
    ];
    for (const { slug, title } of tables)
      expect({ slug, title }).toEqual({ slug, title: PROBLEM_EXPLANATIONS[slug]?.title });
  });

  it("say what to do in one of three ways, and name the page by its type", () => {
    expect(problemPageView("idempotency-key-reused")).toMatchObject({
      type: "/problems/idempotency-key-reused",
      status: 422,
      action: "new-key",
      actionLabel: "Use a new key",
    });
    expect(problemPageView("request-in-progress")?.action).toBe("retry");
    expect(problemPageView("idempotency-key-missing")?.action).toBe("fix");
  });

  it("have no page for an unknown slug, nor for an object's own names", () => {
    expect(problemPageView("no-such-problem")).toBeUndefined();
    expect(problemPageView("__proto__")).toBeUndefined();
    expect(problemPageView("constructor")).toBeUndefined();
  });

  it("list every problem once on the index, grouped by what to do", () => {
    const listed = problemIndexView().flatMap((group) =>
      group.problems.map((problem) => [problem.slug, group.action]),
    );
    expect(listed.map(([slug]) => slug).sort()).toEqual(Object.keys(PROBLEM_EXPLANATIONS).sort());
    for (const [slug, action] of listed) expect(PROBLEM_EXPLANATIONS[slug!]!.action).toBe(action);
  });
});
