import { describe, expect, it } from "vitest";
import { openApiDocument, type JsonObject } from "@/lib/openapi/document";
import { exampleViolations } from "@/lib/testing/openapi-example-check";
import { OPERATION_EXAMPLES } from "@/lib/openapi/examples";
import { withExamples } from "@/lib/openapi/with-examples";

const policy = { retentionSeconds: 24 * 3600, leaseSeconds: 30, maxWaitSeconds: 10 };

type Operation = {
  operationId: string;
  tags: string[];
  parameters?: { name: string; example?: unknown }[];
  requestBody?: { content: Record<string, { example?: unknown }> };
  responses: Record<
    string,
    {
      headers?: Record<string, { example?: unknown }>;
      content?: Record<string, { example?: unknown }>;
    }
  >;
};

function operationsOf(document: JsonObject) {
  return Object.entries(document.paths as Record<string, Record<string, Operation>>).flatMap(
    ([path, item]) =>
      Object.entries(item).map(([method, operation]) => ({ path, method, operation })),
  );
}

/** The operations the reference lists: not HEAD, OPTIONS or a method a path does not serve. */
function listed(document: JsonObject) {
  return operationsOf(document).filter(
    ({ method, operation }) =>
      !["head", "options"].includes(method) && !operation.tags.includes("Not served"),
  );
}

describe("the OpenAPI document's examples", () => {
  it("fit the schemas beside them: every parameter, request body, response header and body", () => {
    const document = openApiDocument(policy);
    expect(exampleViolations(document)).toEqual([]);
  });

  it("cover every listed operation: its parameters, its request body, and at least one answer with its body", () => {
    const document = openApiDocument(policy);
    for (const { path, method, operation } of listed(document)) {
      const name = `${method} ${path}`;
      for (const parameter of operation.parameters ?? [])
        if (parameter.name !== "starting_after")
          expect(parameter.example, `${name} ${parameter.name}`).toBeDefined();
      for (const described of Object.values(operation.requestBody?.content ?? {}))
        expect(described.example, `${name} request body`).toBeDefined();
      const answered = Object.values(operation.responses).filter((response) =>
        Object.values(response.content ?? {}).some((described) => described.example !== undefined),
      );
      expect(answered.length, name).toBeGreaterThan(0);
      for (const response of answered)
        expect(response.headers!["X-Request-Id"]!.example, name).toBeDefined();
    }
    expect(Object.keys(OPERATION_EXAMPLES).sort()).toEqual(
      listed(document)
        .map(({ operation }) => operation.operationId)
        .sort(),
    );
  });

  it("is a check that can fail: a mutated request body, answer body, header or parameter is found", () => {
    const document = openApiDocument(policy);
    const checkout = structuredClone(document) as JsonObject;
    const post = (checkout.paths as Record<string, Record<string, Operation>>)["/api/orders"]!
      .post!;
    const order = post.responses["201"]!.content!["application/json"]!;
    order.example = { ...(order.example as JsonObject), amount: "5050" };
    const request = post.requestBody!.content["application/json"]!;
    request.example = {
      ...(request.example as JsonObject),
      items: [{ sku: "mug-ceramic-350", quantity: 0 }],
    };
    post.responses["409"]!.headers!["Retry-After"]!.example = "soon";
    post.parameters!.find((parameter) => parameter.name === "Idempotency-Key")!.example = "";
    const problem = post.responses["409"]!.content!["application/problem+json"]!;
    problem.example = { ...(problem.example as JsonObject), status: 500 };

    const violations = exampleViolations(checkout);
    expect(violations).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          /^POST \/api\/orders 201 application\/json body: \/amount must be integer/,
        ),
        expect.stringMatching(
          /^POST \/api\/orders request body: \/items\/0\/quantity must be >= 1/,
        ),
        expect.stringMatching(/^POST \/api\/orders 409 header Retry-After: \/ must match pattern/),
        expect.stringMatching(/^POST \/api\/orders header parameter Idempotency-Key: /),
        expect.stringMatching(/^POST \/api\/orders 409 application\/problem\+json body: \/status /),
      ]),
    );
    // The examples are shared objects in the document: each mutation is a copy, so only
    // the checkout's examples changed, and nothing else is reported.
    expect(violations.every((violation) => violation.startsWith("POST /api/orders "))).toBe(true);
  });

  it("refuses an example of a parameter, status or header the operation does not have", () => {
    const operation = {
      parameters: [{ name: "id", in: "path" }],
      responses: {
        "200": { headers: { "X-Request-Id": {} }, content: { "application/json": {} } },
      },
    };
    expect(() => withExamples("op", operation, { parameters: { limit: 1 }, answers: [] })).toThrow(
      /parameter it does not take: limit/,
    );
    expect(() => withExamples("op", operation, { answers: [{ status: 404, body: {} }] })).toThrow(
      /answers 404/,
    );
    expect(() =>
      withExamples("op", operation, {
        answers: [{ status: 200, headers: { Location: "/x" }, body: {} }],
      }),
    ).toThrow(/sends Location/);
    expect(() => withExamples("op", operation, { answers: [{ status: 200 }] })).toThrow(
      /must have a body at 200/,
    );
  });
});
