import { describe, expect, it } from "vitest";
import { openApiDocument, type JsonObject } from "@/lib/openapi/document";
import { TOKEN_PLACEHOLDER } from "@/lib/pages/api-examples";
import { apiReferenceView } from "@/lib/pages/api-reference";

const policy = { retentionSeconds: 24 * 3600, leaseSeconds: 30, maxWaitSeconds: 10 };

type Operation = {
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
const pathsOf = (document: JsonObject) =>
  document.paths as Record<string, Record<string, Operation>>;

function entry(document: JsonObject, id: string) {
  return apiReferenceView(document)
    .groups.flatMap((group) => group.operations)
    .find((operation) => operation.id === id)!;
}

describe("the API reference's example requests and answers", () => {
  it("gives every listed operation an example request and at least one answer", () => {
    const view = apiReferenceView(openApiDocument(policy));
    for (const operation of view.groups.flatMap((group) => group.operations)) {
      expect(operation.example?.request.startLine, operation.id).toMatch(
        new RegExp(`^${operation.method} /api/\\S+ HTTP/1.1$`),
      );
      expect(operation.example!.answers.length, operation.id).toBeGreaterThan(0);
    }
  });

  it("shows the checkout as the document's examples have it: the key, the body, the 201 and the 409", () => {
    const document = openApiDocument(policy);
    const post = pathsOf(document)["/api/orders"]!.post!;
    const key = post.parameters!.find((parameter) => parameter.name === "Idempotency-Key")!;
    const { request, answers } = entry(document, "createOrder").example!;

    expect(request.startLine).toBe("POST /api/orders HTTP/1.1");
    expect(request.headers).toEqual([
      { name: "Authorization", value: TOKEN_PLACEHOLDER },
      { name: "Idempotency-Key", value: key.example },
      { name: "Prefer", value: "wait=10" },
      { name: "Content-Type", value: "application/json" },
    ]);
    expect(request.body).toEqual(post.requestBody!.content["application/json"]!.example);
    expect(JSON.parse(request.bodyText!)).toEqual(request.body);

    expect(answers.map((answer) => answer.startLine)).toEqual([
      "HTTP/1.1 201 Created",
      "HTTP/1.1 409 Conflict",
    ]);
    const created = post.responses["201"]!;
    expect(answers[0]!.headers).toEqual([
      { name: "Content-Type", value: "application/json" },
      { name: "X-Request-Id", value: created.headers!["X-Request-Id"]!.example },
      { name: "Location", value: created.headers!.Location!.example },
      {
        name: "Idempotency-Key-Expires",
        value: created.headers!["Idempotency-Key-Expires"]!.example,
      },
      { name: "Idempotency-Key-Policy", value: "retention=86400, lease=30" },
    ]);
    expect(answers[0]!.body).toEqual(created.content!["application/json"]!.example);
    expect(answers[1]!.headers).toContainEqual({ name: "Retry-After", value: "1" });
    expect(answers[1]!.headers[0]).toEqual({
      name: "Content-Type",
      value: "application/problem+json",
    });
  });

  it("fills a path's parameters and a list's query from their examples", () => {
    const document = openApiDocument(policy);
    const orderId = pathsOf(document)["/api/orders/{id}"]!.get!.parameters![0]!.example;
    expect(entry(document, "getOrder").example!.request.startLine).toBe(
      `GET /api/orders/${String(orderId)} HTTP/1.1`,
    );
    expect(entry(document, "listOrders").example!.request.startLine).toBe(
      "GET /api/orders?limit=1 HTTP/1.1",
    );
    expect(entry(document, "listProducts").example!.request.headers).toEqual([]);
    expect(entry(document, "metrics").example!.answers[0]!.bodyText).toMatch(/^# HELP /);
  });

  it("reads the examples from the document it is given, not from a copy of its own", () => {
    const document = structuredClone(openApiDocument(policy));
    const post = pathsOf(document)["/api/orders"]!.post!;
    post.requestBody!.content["application/json"]!.example = { cartId: "changed" };
    expect(entry(document, "createOrder").example!.request.body).toEqual({ cartId: "changed" });

    for (const response of Object.values(post.responses))
      for (const described of Object.values(response.content ?? {})) delete described.example;
    expect(entry(document, "createOrder").example).toBeUndefined();
  });
});
