/**
 * What a JSON request body may contain, beyond being JSON. Each rule is one
 * the server would otherwise break on later, after the key was claimed or a
 * card was charged:
 *
 * - no U+0000 in any string or object key: PostgreSQL refuses it in `text`
 *   and `jsonb`, so the stored body, the key row or the order would fail;
 * - no lone surrogate (half of a UTF-16 pair, e.g. "\ud800"): the canonical
 *   JSON behind the fingerprint (RFC 8785) refuses it, and it is not text;
 * - finite numbers only: `1e400` parses to Infinity, which JSON cannot
 *   represent, so it could be neither hashed nor stored;
 * - at most MAX_JSON_DEPTH levels of arrays and objects: the canonical
 *   serialiser and PostgreSQL's jsonb recurse, and a few thousand levels
 *   overflow a stack at a depth that moves as the process warms up.
 *
 * The walk is iterative, so the check itself has no depth to overflow. It
 * runs on every body where it is read, before anything else looks at it.
 */

// Far above any real request (a checkout is three levels deep), far below
// where any code path that walks the value runs out of stack.
export const MAX_JSON_DEPTH = 32;

export type JsonRuleViolation = {
  rule: "nul-character" | "lone-surrogate" | "non-finite-number" | "too-deep";
  path: string;
  detail: string;
};

export function checkJsonRules(value: unknown): JsonRuleViolation | null {
  const pending: { value: unknown; path: string; depth: number }[] = [
    { value, path: "", depth: 0 },
  ];
  while (pending.length > 0) {
    const { value: current, path, depth } = pending.pop()!;
    if (typeof current === "string") {
      const problem = stringProblem(current, path, "string");
      if (problem) return problem;
    } else if (typeof current === "number") {
      if (!Number.isFinite(current)) {
        return {
          rule: "non-finite-number",
          path,
          detail: `The number at ${where(path)} is too large to represent (JSON numbers must be finite).`,
        };
      }
    } else if (typeof current === "object" && current !== null) {
      if (depth >= MAX_JSON_DEPTH) {
        return {
          rule: "too-deep",
          path,
          detail: `The body nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep (at ${where(path)}).`,
        };
      }
      if (Array.isArray(current)) {
        current.forEach((item, index) =>
          pending.push({ value: item, path: `${path}[${index}]`, depth: depth + 1 }),
        );
      } else {
        for (const [key, item] of Object.entries(current)) {
          const childPath = `${path}.${printable(key)}`;
          const problem = stringProblem(key, childPath, "key");
          if (problem) return problem;
          pending.push({ value: item, path: childPath, depth: depth + 1 });
        }
      }
    }
  }
  return null;
}

function stringProblem(
  text: string,
  path: string,
  what: "string" | "key",
): JsonRuleViolation | null {
  const subject =
    what === "key" ? `The object key at ${where(path)}` : `The string at ${where(path)}`;
  if (text.includes("\u0000"))
    return {
      rule: "nul-character",
      path,
      detail: `${subject} contains U+0000 (NUL), which cannot be stored.`,
    };
  if (!text.isWellFormed())
    return {
      rule: "lone-surrogate",
      path,
      detail: `${subject} contains a lone UTF-16 surrogate (such as \\ud800), which is not text.`,
    };
  return null;
}

function where(path: string): string {
  return path === "" ? "the top level" : path.replace(/^\./, "");
}

// A path is shown to the client; keep it readable and free of what was refused.
function printable(key: string): string {
  const safe = key.replace(/[\u0000-\u001f\ud800-\udfff]/g, "?");
  return safe.length > 40 ? `${safe.slice(0, 40)}…` : safe;
}
