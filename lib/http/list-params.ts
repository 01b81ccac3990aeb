import { problemResponse, problemType } from "@/lib/http/problem";
import { isUuid } from "@/lib/http/uuid";

/**
 * The query of a list endpoint, as Stripe's lists take it: `limit` (1 to a
 * maximum) and `starting_after` (the id of the last item of the previous
 * page; the next page starts after it). Anything else, a parameter given
 * twice, or a value that is not one is a 400 that says which: a typo such as
 * `limt=5` must not silently return the default page.
 */
export interface ListParams {
  limit: number;
  startingAfter?: string;
}

const ALLOWED = new Set(["limit", "starting_after"]);

export interface QueryError {
  path: string;
  message: string;
}

export type ListParamsResult =
  { ok: true; params: ListParams } | { ok: false; errors: QueryError[] };

export function parseListParams(
  url: URL,
  limits: { defaultLimit: number; maxLimit: number },
): ListParamsResult {
  const errors: QueryError[] = [];
  for (const name of new Set(url.searchParams.keys())) {
    if (!ALLOWED.has(name))
      errors.push({
        path: name,
        message: `unknown parameter (this list takes ${[...ALLOWED].join(" and ")})`,
      });
    else if (url.searchParams.getAll(name).length > 1)
      errors.push({ path: name, message: "given more than once" });
  }
  const limitText = url.searchParams.get("limit");
  const limit =
    limitText === null
      ? limits.defaultLimit
      : /^\d{1,4}$/.test(limitText)
        ? Number(limitText)
        : NaN;
  if (!(limit >= 1 && limit <= limits.maxLimit))
    errors.push({ path: "limit", message: `must be a whole number from 1 to ${limits.maxLimit}` });
  const startingAfter = url.searchParams.get("starting_after") ?? undefined;
  if (startingAfter !== undefined && !isUuid(startingAfter))
    errors.push({ path: "starting_after", message: "must be the id of an item of this list" });

  if (errors.length > 0) return { ok: false, errors };
  return { ok: true, params: { limit, ...(startingAfter !== undefined && { startingAfter }) } };
}

export function describeQueryErrors(errors: QueryError[]): string {
  return errors.map((error) => `${error.path}: ${error.message}`).join("; ");
}

export function invalidQuery(errors: QueryError[]): Response {
  return problemResponse({
    type: problemType("invalid-query"),
    title: "Invalid query parameters",
    status: 400,
    detail: describeQueryErrors(errors),
    errors,
  });
}
