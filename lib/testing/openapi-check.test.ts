import { describe, expect, it } from "vitest";
import { openApiDocument } from "@/lib/openapi/document";
import { OpenApiJudge, type Answer } from "@/lib/testing/openapi-check";

// The judge must be able to fail: each departure from the document is named.
const judge = new OpenApiJudge(
  openApiDocument({ retentionSeconds: 86400, leaseSeconds: 30, maxWaitSeconds: 10 }),
);

const inProgress: Answer = {
  method: "POST",
  path: "/api/orders",
  status: 409,
  headers: {
    "content-type": "application/problem+json",
    "x-request-id": "3f0c5d1e-7a43-4a8e-9a55-2a3f4b1d2c6e",
    "retry-after": "1",
  },
  body: JSON.stringify({
    type: "/problems/request-in-progress",
    title: "A request with this key is still in progress",
    status: 409,
    detail: "Retry later.",
  }),
};

describe("OpenApiJudge", () => {
  it("finds nothing wrong with an answer the document describes", () => {
    expect(judge.answerViolations(inProgress)).toEqual([]);
  });

  it("names a required header that is missing", () => {
    const headers = { ...inProgress.headers };
    delete headers["retry-after"];
    expect(judge.answerViolations({ ...inProgress, headers })).toEqual([
      "POST /api/orders 409: required header Retry-After is missing",
    ]);
  });

  it("names a status, a method and a path the document does not have", () => {
    expect(judge.answerViolations({ ...inProgress, status: 418 })).toEqual([
      "the document has no 418 for POST /api/orders",
    ]);
    expect(judge.answerViolations({ ...inProgress, path: "/api/nothing" })).toEqual([
      "the document has no path /api/nothing",
    ]);
  });

  it("names another media type, and a body its schema rejects", () => {
    expect(
      judge.answerViolations({
        ...inProgress,
        headers: { ...inProgress.headers, "content-type": "application/json" },
      }),
    ).toEqual([
      "POST /api/orders 409: Content-Type application/json, the document says application/problem+json",
    ]);
    const wrongType = JSON.stringify({ ...JSON.parse(inProgress.body), type: "about:blank" });
    expect(judge.answerViolations({ ...inProgress, body: wrongType })[0]).toMatch(
      /^POST \/api\/orders 409: body \/type must be equal to one of the allowed values/,
    );
  });

  it("matches a path's template, literal segments first, and judges other methods as TRACE", () => {
    expect(judge.templateFor("/api/orders/6d1f5f9e-0f5b-4d43-9d7e-0b1c2d3e4f50?x=1")).toBe(
      "/api/orders/{id}",
    );
    expect(judge.templateFor("/api/lab/storms")).toBe("/api/lab/storms");
    const refused: Answer = {
      method: "PROPFIND",
      path: "/api/orders",
      status: 405,
      headers: {
        "content-type": "application/problem+json",
        "x-request-id": "3f0c5d1e-7a43-4a8e-9a55-2a3f4b1d2c6e",
        allow: "GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS",
      },
      body: JSON.stringify({
        type: "/problems/method-not-allowed",
        title: "Method not allowed",
        status: 405,
        detail: "No.",
      }),
    };
    expect(judge.answerViolations(refused)).toEqual([]);
  });
});
