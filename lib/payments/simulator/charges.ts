import type pg from "pg";
import { jsonResponse, resourceMissing, type ApiResponse } from "@/lib/payments/simulator/errors";
import { findCharge, type ChargeRow } from "@/lib/payments/simulator/ledger";
import { chargeObject } from "@/lib/payments/simulator/objects";
import { parseLimit, readQuery } from "@/lib/payments/simulator/query-params";

/**
 * GET /v1/charges: the caller's charges, newest first, as Stripe's list
 * object, optionally only those of one PaymentIntent (`payment_intent`),
 * which is how a merchant sees every attempt to move money for it (a decline
 * is a failed charge, not just an intent's status). Another account's
 * PaymentIntent has no charges here, as at Stripe, where it does not exist
 * for the caller. Only `payment_intent` and `limit` are supported; the
 * cursors (`starting_after`, `ending_before`) are not, so they are refused
 * rather than ignored, and `has_more` says when a page was cut short.
 */
const KNOWN = new Set(["payment_intent", "limit"]);

export async function listCharges(
  pool: pg.Pool,
  account: string,
  search: string,
): Promise<ApiResponse> {
  const read = readQuery(search, KNOWN);
  if (!read.ok) return read.response;
  const limit = parseLimit(read.params.limit);
  if (!limit.ok) return limit.response;
  // One more than asked for, to tell whether there is more.
  const { rows } = await pool.query<ChargeRow>(
    `SELECT * FROM payment_simulator.charges
      WHERE account = $1 AND ($2::text IS NULL OR payment_intent = $2)
      ORDER BY created DESC, id DESC LIMIT $3`,
    [account, read.params.payment_intent ?? null, limit.limit + 1],
  );
  return jsonResponse(200, {
    object: "list",
    url: "/v1/charges",
    has_more: rows.length > limit.limit,
    data: rows.slice(0, limit.limit).map((row) => chargeObject(row)),
  });
}

/**
 * GET /v1/charges/:id, within the caller's account only: another account's
 * charge is 404 `resource_missing` (param `charge`), as an unknown id is.
 * It takes no parameters; `expand[]` is not implemented here.
 */
export async function retrieveCharge(
  pool: pg.Pool,
  account: string,
  id: string,
  search: string,
): Promise<ApiResponse> {
  const read = readQuery(search, new Set());
  if (!read.ok) return read.response;
  const row = await findCharge(pool, account, id);
  return row ? jsonResponse(200, chargeObject(row)) : resourceMissing("charge", id, "charge");
}
