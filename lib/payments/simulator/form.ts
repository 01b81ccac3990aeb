/**
 * Stripe's request bodies: `application/x-www-form-urlencoded`, with nesting
 * written in brackets the way Rack parses it, which is what Stripe's API and
 * its SDKs speak:
 *
 *   amount=1900&metadata[order]=42&payment_method_types[0]=card&expand[]=x
 *   → { amount: "1900", metadata: { order: "42" },
 *       payment_method_types: { "0": "card" }, expand: ["x"] }
 *
 * Every leaf is a string; typing ("1900" is an integer) belongs to the
 * endpoint, which knows what each parameter means. `a[]` appends to a list;
 * `a[0]` is a key like any other, as Rack has it, and `listOf()` reads either
 * form as a list. Objects have no prototype, so a parameter named
 * `__proto__` is just a parameter.
 */
export type FormValue = string | FormObject | FormValue[];
export interface FormObject {
  [key: string]: FormValue;
}

/** Why a body could not be read, naming the parameter (Stripe answers 400 invalid_request_error). */
export class FormError extends Error {
  constructor(
    message: string,
    readonly param?: string,
  ) {
    super(message);
    this.name = "FormError";
  }
}

// Deeper nesting than any Stripe parameter uses is a malformed (or hostile) body.
const MAX_DEPTH = 8;

export function newFormObject(): FormObject {
  return Object.create(null) as FormObject;
}

export function parseForm(body: string): FormObject {
  const root = newFormObject();
  if (body.trim() === "") return root;
  for (const pair of body.split("&")) {
    if (pair === "") continue;
    const equals = pair.indexOf("=");
    const rawName = equals === -1 ? pair : pair.slice(0, equals);
    const rawValue = equals === -1 ? "" : pair.slice(equals + 1);
    // Brackets may arrive encoded (%5B%5D) or bare; decode before reading them.
    const name = decode(rawName);
    assign(root, splitName(name), decode(rawValue), name);
  }
  return root;
}

/** `metadata[order][id]` → ["metadata", "order", "id"]; `expand[]` → ["expand", ""]. */
export function splitName(name: string): string[] {
  const match = /^([^[\]]+)((?:\[[^[\]]*\])*)$/.exec(name);
  if (!match) throw new FormError(`Invalid parameter name: '${name}'.`, name);
  const segments = [match[1]!];
  for (const [, segment] of match[2]!.matchAll(/\[([^[\]]*)\]/g)) segments.push(segment!);
  if (segments.length > MAX_DEPTH)
    throw new FormError(`Parameter '${name}' is nested too deeply.`, name);
  // `a[][b]` would need Rack's rules for merging list elements; Stripe never sends it.
  if (segments.slice(0, -1).some((segment, index) => index > 0 && segment === "")) {
    throw new FormError(`Invalid parameter name: '${name}' ([] is only allowed at the end).`, name);
  }
  return segments;
}

function assign(root: FormObject, segments: string[], value: string, name: string): void {
  let node: FormObject = root;
  for (const [index, segment] of segments.entries()) {
    const last = index === segments.length - 1;
    const appending = segments[index + 1] === "";
    if (last) {
      const existing = node[segment];
      if (typeof existing === "string")
        throw new FormError(`Received parameter '${name}' more than once.`, name);
      if (existing !== undefined)
        throw new FormError(`Parameter '${name}' mixes a plain value with a nested one.`, name);
      node[segment] = value;
      return;
    }
    if (appending) {
      const list = (node[segment] ??= []);
      if (!Array.isArray(list))
        throw new FormError(`Parameter '${name}' mixes a list with another kind of value.`, name);
      list.push(value);
      return;
    }
    const child = (node[segment] ??= newFormObject());
    if (typeof child === "string" || Array.isArray(child)) {
      throw new FormError(
        `Parameter '${name}' mixes a nested object with another kind of value.`,
        name,
      );
    }
    node = child;
  }
}

function decode(text: string): string {
  try {
    return decodeURIComponent(text.replaceAll("+", " "));
  } catch {
    throw new FormError(
      `Invalid percent-encoding in the request body near '${text.slice(0, 40)}'.`,
    );
  }
}

/**
 * A list parameter in either of its spellings: `a[]=x&a[]=y`, or indexed
 * `a[0]=x&a[1]=y` (what stripe-node sends), ordered by index. Undefined if the
 * value is neither.
 */
export function listOf(value: FormValue | undefined): FormValue[] | undefined {
  if (value === undefined || typeof value === "string") return undefined;
  if (Array.isArray(value)) return value;
  const keys = Object.keys(value);
  if (!keys.every((key) => /^(0|[1-9]\d{0,3})$/.test(key))) return undefined;
  return keys
    .map(Number)
    .sort((a, b) => a - b)
    .map((index) => value[String(index)]!);
}

/**
 * The parameters as one string with object keys sorted, so that the same
 * parameters sent in another order read the same (the idempotency
 * fingerprint). List order stays significant. Written out here because the
 * tree holds only strings, objects and lists, and because the `canonicalize`
 * package is ESM-only, which the standalone script's loader cannot require.
 */
export function canonicalForm(value: FormValue): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonicalForm).join(",")}]`;
  const keys = Object.keys(value).sort();
  return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalForm(value[key]!)}`).join(",")}}`;
}
