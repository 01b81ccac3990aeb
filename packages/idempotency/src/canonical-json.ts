/**
 * JSON with object keys sorted (RFC 8785's JSON Canonicalization Scheme:
 * JavaScript's own number and string forms, keys in UTF-16 order). A stored
 * response body goes through PostgreSQL's jsonb, which reorders keys;
 * writing the first answer and every replay canonically is what makes a
 * replay the same bytes, and hashing the canonical form is what makes
 * `{"a":1,"b":2}` and `{"b":2,"a":1}` one request.
 *
 * Written out rather than imported: the one library for it is ESM-only with
 * no `require` entry, which breaks the package for every app or tool that
 * loads it through CommonJS.
 */
export function canonicalJson(value: unknown): string {
  const text = canonical(value, new Set());
  if (text === undefined) throw new TypeError("Value cannot be represented as JSON");
  return text;
}

function canonical(value: unknown, seen: Set<object>): string | undefined {
  if (typeof value === "number" && !Number.isFinite(value))
    throw new TypeError(`${value} cannot be represented as JSON`);
  if (typeof value === "string" && !value.isWellFormed())
    throw new TypeError("A lone surrogate cannot be represented as JSON");
  if (value === null || typeof value !== "object") return JSON.stringify(value);
  if (seen.has(value)) throw new TypeError("Circular reference");
  seen.add(value);
  try {
    const { toJSON } = value as { toJSON?: () => unknown };
    if (typeof toJSON === "function") return canonical(toJSON.call(value), seen);
    if (Array.isArray(value))
      return `[${value.map((item) => canonical(item, seen) ?? "null").join(",")}]`;
    const members: string[] = [];
    for (const key of Object.keys(value).sort()) {
      const member = canonical((value as Record<string, unknown>)[key], seen);
      // As JSON.stringify: undefined, functions and symbols leave no member.
      if (member !== undefined) members.push(`${canonical(key, seen)}:${member}`);
    }
    return `{${members.join(",")}}`;
  } finally {
    seen.delete(value);
  }
}
