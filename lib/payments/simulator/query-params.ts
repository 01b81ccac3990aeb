import {
  invalidRequest,
  unknownParameter,
  type ApiResponse,
} from "@/lib/payments/simulator/errors";
import { FormError, listOf, parseForm } from "@/lib/payments/simulator/form";

/**
 * The parameters of a GET (a retrieve, a list or a search), read as Stripe
 * reads them: the query string is form-encoded like a POST body (stripe-node
 * writes both with the same encoder), every parameter the endpoint does not
 * know is 400 `parameter_unknown`, and each known one is a plain value sent
 * at most once, or, for those the endpoint takes as lists (`expand[]`), a
 * list of plain values.
 */
export type QueryResult =
  | {
      ok: true;
      params: Partial<Record<string, string>>;
      lists: Partial<Record<string, string[]>>;
    }
  | { ok: false; response: ApiResponse };

export function readQuery(
  search: string,
  known: ReadonlySet<string>,
  knownLists: ReadonlySet<string> = new Set(),
): QueryResult {
  let form;
  try {
    form = parseForm(search.startsWith("?") ? search.slice(1) : search);
  } catch (error) {
    if (error instanceof FormError)
      return {
        ok: false,
        response: invalidRequest(error.message, error.param ? { param: error.param } : {}),
      };
    throw error;
  }
  const params: Partial<Record<string, string>> = {};
  const lists: Partial<Record<string, string[]>> = {};
  for (const [name, value] of Object.entries(form)) {
    if (knownLists.has(name)) {
      const list = listOf(value);
      if (!list || !list.every((item) => typeof item === "string"))
        return {
          ok: false,
          response: invalidRequest(`Invalid array: ${name} must be a list of strings.`, {
            param: name,
          }),
        };
      lists[name] = list as string[];
      continue;
    }
    if (!known.has(name)) return { ok: false, response: unknownParameter(name) };
    if (typeof value !== "string")
      return {
        ok: false,
        response: invalidRequest(
          `Invalid string: ${name} must be a plain value, not a nested one.`,
          { param: name },
        ),
      };
    params[name] = value;
  }
  return { ok: true, params, lists };
}

// Stripe's bounds for `limit`, on every list and search.
const DEFAULT_LIMIT = 10;
const MAX_LIMIT = 100;

export type LimitResult = { ok: true; limit: number } | { ok: false; response: ApiResponse };

/** `limit`: an integer from 1 to 100, 10 when absent. */
export function parseLimit(text: string | undefined): LimitResult {
  if (text === undefined) return { ok: true, limit: DEFAULT_LIMIT };
  const limit = /^\d{1,3}$/.test(text) ? Number(text) : NaN;
  if (!(limit >= 1 && limit <= MAX_LIMIT)) {
    return {
      ok: false,
      response: invalidRequest(`Invalid limit: must be an integer from 1 to ${MAX_LIMIT}.`, {
        param: "limit",
        code: "parameter_invalid_integer",
      }),
    };
  }
  return { ok: true, limit };
}
