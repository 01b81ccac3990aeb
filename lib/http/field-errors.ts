import type { z } from "zod";

/** A field of a request body at fault: its dotted path ("" for the body itself) and why. */
export interface FieldError {
  path: string;
  message: string;
}

export type Parsed<T> =
  { ok: true; value: T } | { ok: false; detail: string; errors: FieldError[] };

/**
 * Reads `json` with `schema`; a refusal names every field at fault, in the
 * problem's `errors` and in one `detail` sentence, worded alike for every
 * body that is read this way.
 */
export function parseWith<T>(schema: z.ZodType<T>, json: unknown): Parsed<T> {
  const parsed = schema.safeParse(json);
  if (parsed.success) return { ok: true, value: parsed.data };
  const errors = parsed.error.issues.map((issue) => ({
    path: issue.path.join("."),
    message: issue.message,
  }));
  return {
    ok: false,
    detail: errors.map((e) => (e.path ? `${e.path}: ${e.message}` : e.message)).join("; "),
    errors,
  };
}
