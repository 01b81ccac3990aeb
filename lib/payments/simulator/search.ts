import type pg from "pg";
import { invalidRequest, jsonResponse, type ApiResponse } from "@/lib/payments/simulator/errors";
import type { PaymentIntentRow } from "@/lib/payments/simulator/ledger";
import { paymentIntentObject } from "@/lib/payments/simulator/objects";
import { parseLimit, readQuery } from "@/lib/payments/simulator/query-params";

/**
 * GET /v1/payment_intents/search, in Stripe's query language, the subset a
 * merchant needs to find its own charge again: exact matches on
 * `metadata['key']`, `status` and `currency`, joined by AND, e.g.
 *
 *   metadata['oncepay_provider_key']:'oncepay:…' AND status:'succeeded'
 *
 * Unlike Stripe's, this search is immediately consistent: Stripe indexes
 * new objects within about a minute (longer during an incident), so there an
 * empty result proves nothing about a charge made just now. The answer is
 * Stripe's search_result list, `limit` (1–100) at a time; `next_page` is the
 * token to pass as `page` for the next one while `has_more`.
 */
export type SearchClause =
  | { field: "metadata"; key: string; value: string }
  | { field: "status" | "currency"; value: string };

export type ParsedQuery =
  | { ok: true; clauses: SearchClause[] }
  | { ok: false; message: string; code?: "parameter_missing" };

// Stripe's own limit on the clauses of one search query.
export const MAX_SEARCH_CLAUSES = 10;
// Ten of the longest clause Stripe can match, metadata['<key of 40>']:'<value
// of 500>' (555 characters each), with room for the ANDs between them: no
// longer query can be one worth answering, so it is refused before parsing.
export const MAX_SEARCH_QUERY_LENGTH = 6000;

// Sticky (`y`): each matches at the cursor only, never searching ahead, and
// what it scans it consumes, so a parse reads every character a bounded
// number of times. A split on /\s+AND\s+/ did not: at every blank of a long
// run it rescanned the rest of the run, quadratic in the run's length.
// field:'value' or field:"value", metadata with its key in brackets.
const CLAUSE = /(?:metadata\[(?:'([^']*)'|"([^"]*)")\]|(status|currency)):(?:'([^']*)'|"([^"]*)")/y;
const AND = /\s+AND\s+/y;
const BLANKS = /\s*/y;

/** At most MAX_SEARCH_QUERY_LENGTH characters and MAX_SEARCH_CLAUSES clauses, read in one pass. */
export function parseSearchQuery(query: string): ParsedQuery {
  return readSearchQuery(query, {
    maxLength: MAX_SEARCH_QUERY_LENGTH,
    maxClauses: MAX_SEARCH_CLAUSES,
  });
}

/** The parse itself, its bounds given: search.test.ts lifts them to show that its cost is linear. */
export function readSearchQuery(
  query: string,
  bounds: { maxLength: number; maxClauses: number },
): ParsedQuery {
  if (query.length > bounds.maxLength)
    return {
      ok: false,
      message: `Search queries are limited to ${bounds.maxLength} characters; this one has ${query.length}.`,
    };
  if (query.trim() === "")
    return { ok: false, message: "Missing required param: query.", code: "parameter_missing" };
  const clauses: SearchClause[] = [];
  let at = skip(BLANKS, query, 0);
  for (;;) {
    if (clauses.length === bounds.maxClauses)
      return {
        ok: false,
        message: `Search queries are limited to ${bounds.maxClauses} clauses.`,
      };
    CLAUSE.lastIndex = at;
    const match = CLAUSE.exec(query);
    if (!match) return unsupported(query, at);
    const value = match[4] ?? match[5] ?? "";
    const key = match[1] ?? match[2];
    clauses.push(
      key !== undefined
        ? { field: "metadata", key, value }
        : { field: match[3] as "status" | "currency", value },
    );
    at = CLAUSE.lastIndex;
    const afterAnd = skip(AND, query, at);
    if (afterAnd === at) break;
    at = afterAnd;
  }
  if (skip(BLANKS, query, at) !== query.length) return unsupported(query, at);
  return { ok: true, clauses };
}

/** Where `pattern` ends when it matches at `at`; `at` itself when it does not. */
function skip(pattern: RegExp, text: string, at: number): number {
  pattern.lastIndex = at;
  return pattern.test(text) ? pattern.lastIndex : at;
}

function unsupported(query: string, at: number): ParsedQuery {
  const rest = query.slice(at).trim();
  const shown = rest.length > 60 ? `${rest.slice(0, 60)}…` : rest;
  return {
    ok: false,
    message: `The payment simulator cannot search for ${JSON.stringify(shown)}. It supports metadata['key']:'value', status:'value' and currency:'value', joined by AND.`,
  };
}

const KNOWN = new Set(["query", "limit", "page"]);

/**
 * The search itself. Newest first, with (created, id) as a total order, so
 * that a page can start strictly after the last row of the one before
 * (keyset paging): rows added between two pages never shift the later ones,
 * as they would with an offset (a row shown twice, or one skipped). A row
 * added in the same second as that last row may still sort after it (ties
 * go by id, `created` is in whole seconds) and appear on a later page.
 * `metadata @> $2` can use the GIN index payment_intents_by_metadata
 * (schema.ts), which is what makes it cheap when one account holds every
 * charge, as OncePay's does; the account condition keeps each account to
 * its own intents. Exported so that schema.test.ts EXPLAINs this very text.
 */
export const SEARCH_PAYMENT_INTENTS_SQL = `SELECT * FROM payment_simulator.payment_intents
  WHERE account = $1 AND metadata @> $2::jsonb
    AND ($3::text IS NULL OR status = $3) AND ($4::text IS NULL OR currency = $4)
    AND ($6::bigint IS NULL OR (created, id) < ($6::bigint, $7::text))
  ORDER BY created DESC, id DESC LIMIT $5`;

export async function searchPaymentIntents(
  pool: pg.Pool,
  account: string,
  search: string,
): Promise<ApiResponse> {
  const read = readQuery(search, KNOWN);
  if (!read.ok) return read.response;
  const parsed = parseSearchQuery(read.params.query ?? "");
  if (!parsed.ok)
    return invalidRequest(parsed.message, {
      param: "query",
      ...(parsed.code && { code: parsed.code }),
    });
  const limit = parseLimit(read.params.limit);
  if (!limit.ok) return limit.response;
  const after = read.params.page === undefined ? null : readPageToken(read.params.page);
  if (after === undefined)
    return invalidRequest(
      "Invalid page: pass the next_page of a previous search unchanged, or no page for the first one.",
      { param: "page" },
    );

  const metadata = Object.fromEntries(
    parsed.clauses.flatMap((clause) =>
      clause.field === "metadata" ? [[clause.key, clause.value]] : [],
    ),
  );
  const status = parsed.clauses.find((clause) => clause.field === "status")?.value ?? null;
  const currency = parsed.clauses.find((clause) => clause.field === "currency")?.value ?? null;
  // One more than asked for, to tell whether there is more.
  const { rows } = await pool.query<PaymentIntentRow>(SEARCH_PAYMENT_INTENTS_SQL, [
    account,
    JSON.stringify(metadata),
    status,
    currency,
    limit.limit + 1,
    after?.created ?? null,
    after?.id ?? null,
  ]);
  const page = rows.slice(0, limit.limit);
  const hasMore = rows.length > limit.limit;
  return jsonResponse(200, {
    object: "search_result",
    url: "/v1/payment_intents/search",
    has_more: hasMore,
    next_page: hasMore ? pageToken(page.at(-1)!) : null,
    data: page.map((row) => paymentIntentObject(row)),
  });
}

/**
 * `next_page`: where the next page starts, as base64url of the last row's
 * (created, id). Opaque to clients, as Stripe's are: they pass it back
 * unchanged and never build one.
 */
export function pageToken(row: Pick<PaymentIntentRow, "created" | "id">): string {
  return Buffer.from(JSON.stringify([Number(row.created), row.id])).toString("base64url");
}

/** The position a `page` token names, or undefined if it is not one the simulator made. */
export function readPageToken(token: string): { created: number; id: string } | undefined {
  // Node's base64url decoder skips characters outside the alphabet: check first.
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(token)) return undefined;
  let position: unknown;
  try {
    position = JSON.parse(Buffer.from(token, "base64url").toString("utf8"));
  } catch {
    return undefined;
  }
  if (!Array.isArray(position) || position.length !== 2) return undefined;
  const [created, id] = position as unknown[];
  if (
    !Number.isSafeInteger(created) ||
    (created as number) < 0 ||
    typeof id !== "string" ||
    !/^pi_[0-9A-Za-z]{1,64}$/.test(id)
  )
    return undefined;
  return { created: created as number, id };
}
