import type pg from "pg";
import { invalidRequest, jsonResponse, type ApiResponse } from "@/lib/payments/simulator/errors";
import { paymentIntentObject, type PaymentIntentRow } from "@/lib/payments/simulator/ledger";

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
 * Stripe's search_result list; paging (`page`) is not supported, `limit` is.
 */
export type SearchClause = { field: "metadata"; key: string; value: string } | { field: "status" | "currency"; value: string };

export type ParsedQuery = { ok: true; clauses: SearchClause[] } | { ok: false; message: string; code?: "parameter_missing" };

// field:'value' or field:"value", metadata with its key in brackets.
const CLAUSE = /^(?:metadata\[(?:'([^']*)'|"([^"]*)")\]|(status|currency)):(?:'([^']*)'|"([^"]*)")$/;

export function parseSearchQuery(query: string): ParsedQuery {
  const parts = query.trim().split(/\s+AND\s+/);
  if (query.trim() === "") return { ok: false, message: "Missing required param: query.", code: "parameter_missing" };
  const clauses: SearchClause[] = [];
  for (const part of parts) {
    const match = CLAUSE.exec(part.trim());
    if (!match) {
      return {
        ok: false,
        message: `The payment simulator cannot search for ${JSON.stringify(part)}. It supports metadata['key']:'value', status:'value' and currency:'value', joined by AND.`,
      };
    }
    const value = match[4] ?? match[5] ?? "";
    const key = match[1] ?? match[2];
    clauses.push(key !== undefined ? { field: "metadata", key, value } : { field: match[3] as "status" | "currency", value });
  }
  return { ok: true, clauses };
}

const DEFAULT_LIMIT = 10;
const MAX_LIMIT = 100;

export async function searchPaymentIntents(pool: pg.Pool, account: string, params: URLSearchParams): Promise<ApiResponse> {
  const parsed = parseSearchQuery(params.get("query") ?? "");
  if (!parsed.ok) return invalidRequest(parsed.message, { param: "query", ...(parsed.code && { code: parsed.code }) });
  const limitText = params.get("limit");
  const limit = limitText === null ? DEFAULT_LIMIT : Number(limitText);
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
    return invalidRequest(`Invalid limit: must be an integer from 1 to ${MAX_LIMIT}.`, { param: "limit", code: "parameter_invalid_integer" });
  }

  const metadata = Object.fromEntries(parsed.clauses.flatMap((clause) => (clause.field === "metadata" ? [[clause.key, clause.value]] : [])));
  const status = parsed.clauses.find((clause) => clause.field === "status")?.value ?? null;
  const currency = parsed.clauses.find((clause) => clause.field === "currency")?.value ?? null;
  // One more than asked for, to tell whether there is more.
  const { rows } = await pool.query<PaymentIntentRow>(
    `SELECT * FROM payment_simulator.payment_intents
      WHERE account = $1 AND metadata @> $2::jsonb
        AND ($3::text IS NULL OR status = $3) AND ($4::text IS NULL OR currency = $4)
      ORDER BY created DESC, id LIMIT $5`,
    [account, JSON.stringify(metadata), status, currency, limit + 1],
  );
  return jsonResponse(200, {
    object: "search_result",
    url: "/v1/payment_intents/search",
    has_more: rows.length > limit,
    next_page: null,
    data: rows.slice(0, limit).map(paymentIntentObject),
  });
}
