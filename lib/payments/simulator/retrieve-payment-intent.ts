import type pg from "pg";
import {
  jsonResponse,
  resourceMissing,
  unknownParameter,
  type ApiResponse,
} from "@/lib/payments/simulator/errors";
import { findCharge, findPaymentIntent } from "@/lib/payments/simulator/ledger";
import { paymentIntentObject, type ExpandedFields } from "@/lib/payments/simulator/objects";
import { readQuery } from "@/lib/payments/simulator/query-params";

/**
 * GET /v1/payment_intents/:id, within the caller's account only (another
 * account's intent is 404 `resource_missing`, param `intent`, as an unknown
 * id is). `expand[]` replaces an id by its object, as at Stripe, for
 * `latest_charge` and `payment_method`; the fields that are always `null`
 * here (no customers, Connect or reviews) expand to `null`, as Stripe
 * expands a field that is null. Any other expansion, nested ones included,
 * is refused as an unknown parameter, so a client that relies on one finds
 * out at once rather than reading an id where it expects an object.
 */
const EXPANDABLE = new Set(["latest_charge", "payment_method"]);
const ALWAYS_NULL_EXPANDABLE = new Set(["application", "customer", "on_behalf_of", "review"]);

export async function retrievePaymentIntent(
  pool: pg.Pool,
  account: string,
  id: string,
  search: string,
): Promise<ApiResponse> {
  const read = readQuery(search, new Set(), new Set(["expand"]));
  if (!read.ok) return read.response;
  const expand = read.lists.expand ?? [];
  const refused = expand.find(
    (field) => !EXPANDABLE.has(field) && !ALWAYS_NULL_EXPANDABLE.has(field),
  );
  if (refused !== undefined) return cannotExpand(refused);

  const row = await findPaymentIntent(pool, account, id);
  if (!row) return resourceMissing("payment_intent", id, "intent");
  const expanded: ExpandedFields = { paymentMethod: expand.includes("payment_method") };
  if (expand.includes("latest_charge") && row.latest_charge)
    expanded.latestCharge = await findCharge(pool, account, row.latest_charge);
  return jsonResponse(200, paymentIntentObject(row, expanded));
}

function cannotExpand(field: string): ApiResponse {
  return unknownParameter(
    "expand",
    `the payment simulator cannot expand ${field}; it expands latest_charge and payment_method`,
  );
}
