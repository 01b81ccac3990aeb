import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import type { JsonObject } from "@/lib/openapi/document";
import { refsPointedInto } from "./openapi-refs";

/**
 * Every `example` an OpenAPI document carries, judged by the schema beside
 * it: each parameter's, each request body's, each response header's and each
 * response body's. A document whose examples say something its schemas
 * refuse would teach clients a request the server rejects, or an answer it
 * never gives.
 */

const DOCUMENT_ID = "oncepay-openapi-examples";

interface Described {
  schema?: JsonObject;
  example?: unknown;
}

interface Operation {
  operationId?: string;
  parameters?: (Described & { name: string; in: string })[];
  requestBody?: { content: Record<string, Described> };
  responses: Record<
    string,
    { headers?: Record<string, Described>; content?: Record<string, Described> }
  >;
}

/** Where each example departs from its schema; empty when every one fits. */
export function exampleViolations(document: JsonObject): string[] {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
  const { components, paths } = document as {
    components: { schemas: JsonObject };
    paths: Record<string, Record<string, Operation>>;
  };
  ajv.addSchema(
    { components: { schemas: refsPointedInto(DOCUMENT_ID, components.schemas) } },
    DOCUMENT_ID,
  );

  const violations: string[] = [];
  const judge = (where: string, described: Described, mediaType = "application/json") => {
    if (described.example === undefined) return;
    if (!mediaType.endsWith("json")) {
      if (typeof described.example !== "string") violations.push(`${where}: not text`);
      return;
    }
    if (!described.schema) return void violations.push(`${where}: an example with no schema`);
    const validate: ValidateFunction = ajv.compile(
      refsPointedInto(DOCUMENT_ID, described.schema) as object,
    );
    if (validate(described.example)) return;
    for (const error of validate.errors ?? [])
      violations.push(`${where}: ${error.instancePath || "/"} ${error.message ?? "is invalid"}`);
  };

  for (const [path, item] of Object.entries(paths))
    for (const [method, operation] of Object.entries(item)) {
      const name = `${method.toUpperCase()} ${path}`;
      for (const parameter of operation.parameters ?? [])
        judge(`${name} ${parameter.in} parameter ${parameter.name}`, parameter);
      for (const [mediaType, described] of Object.entries(operation.requestBody?.content ?? {}))
        judge(`${name} request body`, described, mediaType);
      for (const [status, response] of Object.entries(operation.responses)) {
        for (const [header, described] of Object.entries(response.headers ?? {}))
          judge(`${name} ${status} header ${header}`, described);
        for (const [mediaType, described] of Object.entries(response.content ?? {}))
          judge(`${name} ${status} ${mediaType} body`, described, mediaType);
      }
    }
  return violations;
}
