import { Validator } from "@seriousme/openapi-schema-validator";
import { describe, expect, it } from "vitest";
import { BALANCER_PROBLEMS } from "@/lib/http/balancer-problems";
import { problemType } from "@/lib/http/problem-type";
import { openApiDocument, type JsonObject } from "@/lib/openapi/document";
import { PATHS } from "@/lib/openapi/operations";

const policy = { retentionSeconds: 24 * 3600, leaseSeconds: 30, maxWaitSeconds: 10 };
const document = openApiDocument(policy);

type Operation = {
  responses: Record<
    string,
    { headers: Record<string, { required: boolean }>; content?: JsonObject }
  >;
  parameters?: { name: string; in: string; required?: boolean; schema: JsonObject }[];
  [extension: string]: unknown;
};
const paths = document.paths as Record<string, Record<string, Operation>>;
const operations = Object.entries(paths).flatMap(([path, item]) =>
  Object.entries(item).map(([method, operation]) => ({ path, method, operation })),
);

describe("the OpenAPI document", () => {
  it("is a valid OpenAPI 3.1 document (by the OpenAPI Initiative's own schema)", async () => {
    const result = await new Validator().validate(structuredClone(document));
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it("has every path of the operation table, with a 405 for each method it does not serve and OPTIONS", () => {
    expect(Object.keys(paths).sort()).toEqual(Object.keys(PATHS).sort());
    expect(paths["/api/orders"]!.delete!.responses["405"]!.headers.Allow!.required).toBe(true);
    expect(Object.keys(paths["/api/orders"]!).sort()).toEqual(
      ["get", "head", "post", "put", "patch", "delete", "trace", "options"].sort(),
    );
  });

  it("promises X-Request-Id on every answer, and a 500 and a 503 with Retry-After on every operation", () => {
    for (const { path, method, operation } of operations) {
      for (const [status, response] of Object.entries(operation.responses))
        expect(response.headers["X-Request-Id"]?.required, `${method} ${path} ${status}`).toBe(
          true,
        );
      expect(operation.responses["500"], `${method} ${path}`).toBeDefined();
      expect(operation.responses["503"]!.headers["Retry-After"]!.required).toBe(true);
    }
  });

  it("describes the checkout as the contract says: its statuses, Retry-After on 409 and 429, the replay header", () => {
    const checkout = paths["/api/orders"]!.post!;
    expect(Object.keys(checkout.responses).sort()).toEqual(
      [
        "201",
        "202",
        "400",
        "401",
        "402",
        "403",
        "409",
        "413",
        "415",
        "417",
        "421",
        "422",
        "429",
        "431",
        "500",
        "502",
        "503",
        "504",
      ].sort(),
    );
    expect(checkout.responses["201"]!.headers.Location!.required).toBe(true);
    expect(checkout.responses["201"]!.headers["Idempotent-Replayed"]!.required).toBe(false);
    expect(checkout.responses["402"]!.headers["Idempotent-Replayed"]!.required).toBe(false);
    for (const status of ["409", "429", "503"])
      expect(checkout.responses[status]!.headers["Retry-After"]!.required, status).toBe(true);
    expect(JSON.stringify(checkout.responses["409"]!.content)).toContain(
      "/problems/request-in-progress",
    );
  });

  it("describes what the balancer in front of several instances answers itself, on every operation", () => {
    const typesAt = (operation: Operation, status: string) =>
      JSON.stringify(operation.responses[status]?.content ?? {});
    for (const { path, method, operation } of operations) {
      const name = `${method} ${path}`;
      for (const status of ["502", "503", "504"] as const) {
        const response = operation.responses[status];
        expect(response, `${name} ${status}`).toBeDefined();
        expect(response!.headers["Retry-After"], `${name} ${status}`).toBeDefined();
        if (method !== "head")
          expect(typesAt(operation, status), `${name} ${status}`).toContain(
            problemType(BALANCER_PROBLEMS[status].slug),
          );
      }
      expect(operation.responses["504"]!.headers["Retry-After"]!.required).toBe(true);
    }
    // The checkout's own 502 (the provider refused it) has no Retry-After: only the balancer's does.
    expect(paths["/api/orders"]!.post!.responses["502"]!.headers["Retry-After"]!.required).toBe(
      false,
    );
    expect(typesAt(paths["/api/metrics"]!.get!, "404")).toContain(
      problemType(BALANCER_PROBLEMS[404].slug),
    );
  });

  it("states the key's form, its retention and its lease", () => {
    const checkout = paths["/api/orders"]!.post!;
    const key = checkout.parameters!.find((parameter) => parameter.name === "Idempotency-Key")!;
    expect(key).toMatchObject({ in: "header", required: true, schema: { type: "string" } });
    expect(key.schema.pattern).toContain("{1,255}");
    expect(checkout["x-idempotency-key"]).toEqual({
      header: "Idempotency-Key",
      required: true,
      retentionSeconds: 86400,
      leaseSeconds: 30,
      fingerprint: ["method", "path", "body"],
      scope: "account",
    });
    expect(JSON.stringify(key)).toContain("for 24 hours after its first request");
    expect(JSON.stringify(key)).toContain("a lease of 30 s");
  });

  it("answers every problem as application/problem+json naming its type URNs", () => {
    for (const { path, method, operation } of operations)
      for (const [status, response] of Object.entries(operation.responses)) {
        if (Number(status) < 400) continue;
        const content = response.content;
        if (method === "head") continue; // no body
        expect(Object.keys(content ?? {}), `${method} ${path} ${status}`).toEqual([
          "application/problem+json",
        ]);
        expect(JSON.stringify(content)).toMatch(/\/problems\/[a-z-]+/);
      }
  });
});
