import { COMPONENT_SCHEMA_PREFIX } from "@/lib/openapi/document";

/**
 * A JSON Schema, as the OpenAPI document carries it, read into the rows of
 * a field table: each field's path (`items[].sku`), its type in words, and
 * whether it is required. Only what z.toJSONSchema writes is read.
 */

export interface JsonSchema {
  $ref?: string;
  type?: string | string[];
  format?: string;
  enum?: unknown[];
  const?: unknown;
  default?: unknown;
  description?: string;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  additionalProperties?: JsonSchema | boolean;
}

export interface FieldRow {
  /** Dotted, with `[]` for an array's items: `items[].quantity`. */
  path: string;
  type: string;
  required: boolean;
  description?: string;
  /** For an object of several kinds (a oneOf), which kind has this field: `operation is "refund"`. */
  variant?: string;
}

// Deeper fields are named by their parent's row, not listed.
const MAX_DEPTH = 3;

export function schemaName(ref: string): string {
  return ref.startsWith(COMPONENT_SCHEMA_PREFIX) ? ref.slice(COMPONENT_SCHEMA_PREFIX.length) : ref;
}

/** The type of a schema in a few words: `string (uuid)`, `integer, 1 to 99`, `"a" or "b"`, `Order or null`. */
export function typeInWords(schema: JsonSchema): string {
  if (schema.$ref) return schemaName(schema.$ref);
  const options = schema.anyOf ?? schema.oneOf;
  if (options) return options.map(typeInWords).join(" or ");
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  if (schema.enum) return schema.enum.map((value) => JSON.stringify(value)).join(" or ");
  const type = Array.isArray(schema.type) ? schema.type.join(" or ") : (schema.type ?? "any");
  if (type === "array") {
    const items = schema.items ? typeInWords(schema.items) : "any";
    return `array of ${items}${bounds(schema.minItems, schema.maxItems, "item")}`;
  }
  if (type === "string") {
    const format = schema.format ? ` (${schema.format})` : "";
    return `string${format}${bounds(schema.minLength, schema.maxLength, "character")}`;
  }
  if (type === "integer" || type === "number") return `${type}${range(schema)}`;
  return type;
}

function bounds(min: number | undefined, max: number | undefined, unit: string): string {
  if (min !== undefined && max !== undefined) return `, ${min} to ${max} ${unit}s`;
  if (max !== undefined) return `, at most ${max} ${unit}s`;
  if (min !== undefined && min > 0) return `, at least ${min} ${unit}${min === 1 ? "" : "s"}`;
  return "";
}

function range(schema: JsonSchema): string {
  // zod bounds every int by the safe integers: not a limit worth saying.
  const min = schema.minimum === Number.MIN_SAFE_INTEGER ? undefined : schema.minimum;
  const max = schema.maximum === Number.MAX_SAFE_INTEGER ? undefined : schema.maximum;
  if (min !== undefined && max !== undefined) return `, ${min} to ${max}`;
  if (min !== undefined) return `, at least ${min}`;
  if (max !== undefined) return `, at most ${max}`;
  return "";
}

/** The object inside a schema whose fields are worth listing: itself, an array's items, or the non-null branch. */
function objectWithin(schema: JsonSchema): { object: JsonSchema; suffix: string } | undefined {
  if (schema.properties) return { object: schema, suffix: "" };
  if (schema.items?.properties) return { object: schema.items, suffix: "[]" };
  const branch = schema.anyOf?.find((option) => option.properties);
  return branch ? { object: branch, suffix: "" } : undefined;
}

/** Every field of an object schema, nested fields after their parent. */
export function fieldRows(schema: JsonSchema, prefix = "", depth = 1): FieldRow[] {
  const kinds = schema.oneOf?.filter((option) => option.properties) ?? [];
  if (!schema.properties && kinds.length > 1) return variantRows(kinds, prefix, depth);
  const required = new Set(schema.required ?? []);
  return Object.entries(schema.properties ?? {}).flatMap(([name, field]) => {
    const path = `${prefix}${name}`;
    const row: FieldRow = {
      path,
      type: rowType(field),
      required: required.has(name),
      ...(describe(field) && { description: describe(field) }),
    };
    const inner = depth < MAX_DEPTH ? objectWithin(field) : undefined;
    return inner ? [row, ...fieldRows(inner.object, `${path}${inner.suffix}.`, depth + 1)] : [row];
  });
}

/** A field whose object is listed below it is an `object`, not its shape again. */
function rowType(field: JsonSchema): string {
  if (field.properties) return "object";
  if (field.items?.properties)
    return `array of objects${bounds(field.minItems, field.maxItems, "item")}`;
  if (field.anyOf?.some((option) => option.properties))
    return field.anyOf
      .map((option) => (option.properties ? "object" : typeInWords(option)))
      .join(" or ");
  return typeInWords(field);
}

function describe(field: JsonSchema): string | undefined {
  const notes = [
    field.description,
    field.default !== undefined ? `Default: ${JSON.stringify(field.default)}.` : undefined,
  ].filter(Boolean);
  return notes.length > 0 ? notes.join(" ") : undefined;
}

/**
 * The fields of an object of several kinds (zod's discriminated union: a
 * oneOf whose branches pin one field, the discriminator, to a constant of
 * their own). A field every kind has alike is listed once; the
 * discriminator once, with each kind's value; any other field once for each
 * kind that has it, marked with that kind. In the order the fields first
 * appear.
 */
function variantRows(kinds: JsonSchema[], prefix: string, depth: number): FieldRow[] {
  const names = [...new Set(kinds.flatMap((kind) => Object.keys(kind.properties!)))];
  const discriminator = names.find((name) => {
    const values = kinds.map((kind) => kind.properties![name]?.const);
    return values.every((value) => value !== undefined) && new Set(values).size === kinds.length;
  });
  const valueOf = (kind: JsonSchema) => JSON.stringify(kind.properties![discriminator!]!.const);
  const fieldOf = (kind: JsonSchema, name: string): JsonSchema | undefined =>
    kind.properties![name] && {
      properties: { [name]: kind.properties![name]! },
      required: kind.required?.includes(name) ? [name] : [],
    };
  return names.flatMap((name) => {
    if (name === discriminator) {
      const descriptions = kinds
        .map(
          (kind) =>
            kind.properties![name]!.description &&
            `${valueOf(kind)}: ${kind.properties![name]!.description}`,
        )
        .filter(Boolean);
      return [
        {
          path: `${prefix}${name}`,
          type: kinds.map(valueOf).join(" or "),
          required: true,
          ...(descriptions.length > 0 && { description: descriptions.join(" ") }),
        },
      ];
    }
    const fields = kinds.map((kind) => fieldOf(kind, name));
    const alike = fields.every(
      (field) => field && JSON.stringify(field) === JSON.stringify(fields[0]),
    );
    if (alike) return fieldRows(fields[0]!, prefix, depth);
    return kinds.flatMap((kind, index) => {
      const field = fields[index];
      if (!field) return [];
      const variant = discriminator ? `${discriminator} is ${valueOf(kind)}` : `kind ${index + 1}`;
      return fieldRows(field, prefix, depth).map((row) => ({ ...row, variant }));
    });
  });
}
