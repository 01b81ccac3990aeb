import { PROBLEM_CONTENT_TYPE } from "@/lib/http/problem-type";
import type { JsonObject, KeyPolicy } from "@/lib/openapi/document";
import {
  operationExample,
  type ExampleSource,
  type OperationExampleView,
} from "@/lib/pages/api-examples";
import { checkoutRules, type CheckoutRule } from "@/lib/pages/checkout-rules";
import {
  fieldRows,
  schemaName,
  typeInWords,
  type FieldRow,
  type JsonSchema,
} from "@/lib/pages/schema-fields";

/**
 * What /docs/api shows, read from the OpenAPI document the server
 * publishes (GET /api/openapi.json), so that the page people read and the
 * document their tools read cannot say different things.
 */

export interface ResponseRow {
  status: number;
  description: string;
  /** The problem `type` URNs of an error answer. */
  problems: string[];
  /** A JSON body's schema, or `problem`, `text` or nothing. */
  body?: string;
  headers: { name: string; required: boolean }[];
}

export interface ParameterRow {
  name: string;
  in: string;
  type: string;
  required: boolean;
  description?: string;
}

export interface OperationEntry {
  /** The operationId: the entry's anchor. */
  id: string;
  tag: string;
  method: string;
  path: string;
  summary: string;
  description?: string;
  authenticated: boolean;
  parameters: ParameterRow[];
  requestBody?: string;
  responses: ResponseRow[];
  /** An example request and its answers, from the document's own examples. */
  example?: OperationExampleView;
}

export interface SchemaEntry {
  name: string;
  fields: FieldRow[];
  /** A schema with no fields to list (a record), in words. */
  type: string;
}

export interface ApiReferenceView {
  title: string;
  summary: string;
  description: string;
  rules: CheckoutRule[];
  /** The checkout's answers, every one, for the rules' table. */
  checkout: OperationEntry;
  groups: { tag: string; description: string; operations: OperationEntry[] }[];
  schemas: SchemaEntry[];
}

/** The parts of an OpenAPI 3.1 document this page reads, as lib/openapi/document.ts writes them. */
interface OpenApiDocument {
  info: { title: string; summary: string; description: string };
  tags: { name: string; description: string }[];
  paths: Record<string, Record<string, OpenApiOperation>>;
  components: { schemas: Record<string, JsonSchema> };
}

interface OpenApiOperation extends ExampleSource {
  operationId: string;
  tags: string[];
  summary: string;
  description?: string;
  security?: unknown[];
  parameters?: {
    name: string;
    in: string;
    required?: boolean;
    description?: string;
    schema: JsonSchema;
    example?: unknown;
  }[];
  requestBody?: { content: Record<string, { schema: JsonSchema; example?: unknown }> };
  responses: Record<string, OpenApiResponse>;
  /** The key policy, on the operations that take OncePay's Idempotency-Key. */
  "x-idempotency-key"?: KeyPolicy;
}

interface OpenApiResponse {
  description: string;
  headers?: Record<string, { required?: boolean; example?: unknown }>;
  content?: Record<string, { schema: JsonSchema & { allOf?: JsonSchema[] }; example?: unknown }>;
}

// Listed once in words rather than per path: every path answers OPTIONS,
// and 405 to a method it does not serve; HEAD is GET without the body.
const NOT_LISTED_TAG = "Not served";
const NOT_LISTED_METHODS = new Set(["head", "options"]);

export const CHECKOUT_OPERATION_ID = "createOrder";
const CHECKOUT_PATH = "/api/orders";
const CHECKOUT_METHOD = "post";

export function apiReferenceView(published: JsonObject): ApiReferenceView {
  const document = published as unknown as OpenApiDocument;
  const policy = document.paths[CHECKOUT_PATH]?.[CHECKOUT_METHOD]?.["x-idempotency-key"];
  if (!policy) throw new Error(`The OpenAPI document states no key policy for ${CHECKOUT_PATH}.`);
  const operations = Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(
        ([method, operation]) =>
          !NOT_LISTED_METHODS.has(method) && !operation.tags.includes(NOT_LISTED_TAG),
      )
      .map(([method, operation]) => operationEntry(path, method, operation)),
  );
  const checkout = operations.find((operation) => operation.id === CHECKOUT_OPERATION_ID);
  if (!checkout) throw new Error(`The OpenAPI document has no ${CHECKOUT_OPERATION_ID}.`);

  return {
    title: document.info.title,
    summary: document.info.summary,
    description: document.info.description,
    rules: checkoutRules(policy),
    checkout,
    groups: document.tags
      .map((tag) => ({
        tag: tag.name,
        description: tag.description,
        operations: operations.filter((operation) => operation.tag === tag.name),
      }))
      .filter((group) => group.operations.length > 0),
    schemas: Object.entries(document.components.schemas).map(([name, schema]) => ({
      name,
      fields: fieldRows(schema),
      type: typeInWords(schema),
    })),
  };
}

function operationEntry(path: string, method: string, operation: OpenApiOperation): OperationEntry {
  const body = operation.requestBody?.content["application/json"]?.schema;
  const example = operationExample(method.toUpperCase(), path, operation);
  return {
    id: operation.operationId,
    tag: operation.tags[0]!,
    method: method.toUpperCase(),
    path,
    summary: operation.summary,
    ...(operation.description && { description: operation.description }),
    authenticated: (operation.security ?? []).length > 0,
    parameters: (operation.parameters ?? []).map((parameter) => ({
      name: parameter.name,
      in: parameter.in,
      type: typeInWords(parameter.schema),
      required: parameter.required ?? false,
      ...(parameter.description && { description: parameter.description }),
    })),
    ...(body && { requestBody: typeInWords(body) }),
    responses: Object.entries(operation.responses).map(([status, response]) =>
      responseRow(Number(status), response),
    ),
    ...(example && { example }),
  };
}

function responseRow(status: number, response: OpenApiResponse): ResponseRow {
  const problem = response.content?.[PROBLEM_CONTENT_TYPE]?.schema;
  const json = response.content?.["application/json"]?.schema;
  return {
    status,
    description: response.description,
    problems: problem ? problemTypes(problem.allOf ?? []) : [],
    ...(problem
      ? { body: "problem" }
      : json
        ? { body: json.$ref ? schemaName(json.$ref) : "object" }
        : response.content?.["text/plain"] && { body: "text" }),
    headers: Object.entries(response.headers ?? {}).map(([name, header]) => ({
      name,
      required: header.required ?? false,
    })),
  };
}

/** The URNs a problem answer's `type` may take: the enum its allOf narrows `type` to. */
function problemTypes(allOf: JsonSchema[]): string[] {
  const narrowed = allOf.find((part) => part.properties?.type?.enum);
  return (narrowed?.properties?.type?.enum ?? []).map(String);
}
