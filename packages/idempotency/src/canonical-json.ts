import canonicalize from "canonicalize";

/**
 * JSON with object keys sorted (RFC 8785). A stored response body goes
 * through PostgreSQL's jsonb, which reorders keys; writing the first answer
 * and every replay canonically is what makes a replay the same bytes, and
 * hashing the canonical form is what makes `{"a":1,"b":2}` and
 * `{"b":2,"a":1}` one request.
 */
export function canonicalJson(value: unknown): string {
  const text = canonicalize(value);
  if (text === undefined) throw new TypeError("Value cannot be represented as JSON");
  return text;
}
