import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import type { JsonObject } from "@/lib/openapi/document";
import { refsPointedInto } from "./openapi-refs";

/**
 * Judges an answer by the OpenAPI document: `answerViolations` says where
 * a real response departs from what the document says that operation
 * answers (an undescribed path, method or status, a missing required
 * header, another media type, a body its schema rejects). The contract
 * tests run every answer they receive through it (openapi-setup.ts).
 */

export interface Answer {
  method: string;
  /** The path as sent, query and all. */
  path: string;
  status: number;
  /** Header names in any case; a repeated field as an array. */
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

interface ResponseObject {
  headers?: Record<string, { required?: boolean; schema: JsonObject }>;
  content?: Record<string, { schema: JsonObject }>;
}

type PathItem = Record<string, { responses: Record<string, ResponseObject> }>;

const DOCUMENT_ID = "oncepay-openapi";

export class OpenApiJudge {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
  private readonly validators = new Map<string, ValidateFunction>();
  private readonly templates: { template: string; pattern: RegExp; literal: number }[];

  constructor(private readonly document: JsonObject) {
    const { components } = document as { components: { schemas: JsonObject } };
    this.ajv.addSchema(
      { components: { schemas: refsPointedInto(DOCUMENT_ID, components.schemas) } },
      DOCUMENT_ID,
    );
    this.templates = Object.keys(this.paths()).map((template) => ({
      template,
      pattern: new RegExp(`^${template.replace(/[.]/g, "\\.").replace(/\{[^}]+\}/g, "[^/]+")}$`),
      literal: template.replace(/\{[^}]+\}/g, "").length,
    }));
  }

  private paths(): Record<string, PathItem> {
    return (this.document as { paths: Record<string, PathItem> }).paths;
  }

  /** The document's path template for a request path: literal segments win over `{id}` ones. */
  templateFor(path: string): string | undefined {
    const pathname = new URL(path, "http://origin.invalid").pathname;
    return this.templates
      .filter(({ pattern }) => pattern.test(pathname))
      .sort((a, b) => b.literal - a.literal)[0]?.template;
  }

  answerViolations(answer: Answer): string[] {
    const template = this.templateFor(answer.path);
    if (!template) return [`the document has no path ${answer.path}`];
    const operation = this.paths()[template]![operationMethod(answer.method)];
    if (!operation) return [`the document has no ${answer.method} ${template}`];
    const response = operation.responses[String(answer.status)];
    if (!response) return [`the document has no ${answer.status} for ${answer.method} ${template}`];
    const where = `${answer.method} ${template} ${answer.status}`;
    return [
      ...this.headerViolations(where, response, answer.headers),
      ...(answer.method === "HEAD" ? [] : this.bodyViolations(where, response, answer)),
    ];
  }

  private headerViolations(
    where: string,
    response: ResponseObject,
    headers: Answer["headers"],
  ): string[] {
    const violations: string[] = [];
    for (const [name, header] of Object.entries(response.headers ?? {})) {
      const value = headerValue(headers, name);
      if (value === undefined) {
        if (header.required) violations.push(`${where}: required header ${name} is missing`);
        continue;
      }
      const errors = this.errors(`${where} header ${name}`, header.schema, value);
      violations.push(...errors.map((error) => `${where}: header ${name} ${error}`));
    }
    return violations;
  }

  private bodyViolations(where: string, response: ResponseObject, answer: Answer): string[] {
    const content = response.content;
    if (!content) return answer.body === "" ? [] : [`${where}: a body where the document has none`];
    const contentType = headerValue(answer.headers, "content-type");
    const mediaType = contentType?.split(";")[0]!.trim().toLowerCase();
    const described = mediaType === undefined ? undefined : content[mediaType];
    if (!described)
      return [
        `${where}: Content-Type ${contentType ?? "(none)"}, the document says ${Object.keys(content).join(" or ")}`,
      ];
    if (!mediaType!.endsWith("json")) return [];
    let body: unknown;
    try {
      body = JSON.parse(answer.body);
    } catch {
      return [`${where}: the body is not JSON`];
    }
    return this.errors(`${where} ${mediaType}`, described.schema, body).map(
      (error) => `${where}: body ${error}`,
    );
  }

  private errors(cacheKey: string, schema: JsonObject, value: unknown): string[] {
    let validate = this.validators.get(cacheKey);
    if (!validate) {
      validate = this.ajv.compile(refsPointedInto(DOCUMENT_ID, schema) as object);
      this.validators.set(cacheKey, validate);
    }
    if (validate(value)) return [];
    return (validate.errors ?? []).map(
      (error) =>
        `${error.instancePath || "/"} ${error.message ?? "is invalid"}${
          ["additionalProperties", "enum", "const"].includes(error.keyword)
            ? ` (${JSON.stringify(error.params)})`
            : ""
        }`,
    );
  }
}

// The methods OpenAPI 3.1 has operations for; the document describes every other under TRACE.
const NAMED_METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];

function operationMethod(method: string): string {
  const name = method.toLowerCase();
  return NAMED_METHODS.includes(name) ? name : "trace";
}

/**
 * Whether the document speaks of this path at all: the API's paths, not the
 * shop's pages or files, and not a path with a trailing slash, which
 * Next.js redirects to the path without it before any route sees it (the
 * document's description says so).
 */
export function isApiPath(path: string): boolean {
  const pathname = new URL(path, "http://origin.invalid").pathname;
  return pathname.startsWith("/api/") && !pathname.endsWith("/");
}

function headerValue(headers: Answer["headers"], name: string): string | undefined {
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() !== wanted || value === undefined) continue;
    return Array.isArray(value) ? value.join(", ") : value;
  }
  return undefined;
}
