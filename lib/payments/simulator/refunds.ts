import type pg from "pg";
import {
  invalidRequest,
  jsonResponse,
  resourceMissing,
  type ApiResponse,
} from "@/lib/payments/simulator/errors";
import type { Faults } from "@/lib/payments/simulator/faults";
import {
  readPostForm,
  runMoneyPost,
  type MoneyPost,
} from "@/lib/payments/simulator/idempotent-post";
import { findCharge, findPaymentIntent } from "@/lib/payments/simulator/ledger";
import { refundObject } from "@/lib/payments/simulator/objects";
import { parseLimit, readQuery } from "@/lib/payments/simulator/query-params";
import {
  findRefund,
  listRefundRows,
  refundCharge,
  type RefundTarget,
} from "@/lib/payments/simulator/refund-ledger";
import { parseCreateRefund, type CreateRefundParams } from "@/lib/payments/simulator/refund-params";

/**
 * Stripe's refunds, for the refunds of a card payment:
 *
 *   POST /v1/refunds       refund all or part of a PaymentIntent's charge
 *   GET  /v1/refunds/:id   read one back
 *   GET  /v1/refunds       list them, newest first, one PaymentIntent's or charge's with a filter
 *
 * A refund is a POST that moves money, so it runs as a confirmed
 * PaymentIntent does (idempotent-post.ts): the same Idempotency-Key
 * semantics and the same injected faults. Whether it may happen is decided
 * against the charge under its row lock (refund-ledger.ts), which is what
 * keeps any number of concurrent refunds of one charge within its amount.
 * Every refund succeeds at once, as a card refund in Stripe's test mode
 * does: none is ever pending, failed or canceled here.
 */
export async function createRefund(
  pool: pg.Pool,
  faults: Faults,
  call: MoneyPost,
): Promise<ApiResponse> {
  const read = readPostForm(call);
  if (!read.ok) return read.response;
  const parsed = parseCreateRefund(read.form);
  if (!parsed.ok) return parsed.response;
  const params = parsed.params;
  // An unknown or another account's PaymentIntent or charge is a bad
  // parameter, refused like an unknown payment_method: before the key is
  // claimed, so nothing is stored under it.
  const target = await refundTarget(pool, call.account, params);
  if ("response" in target) return target.response;
  return runMoneyPost(pool, faults, call, read.form, (tx, key) =>
    refundCharge(tx, target, params, { requestId: call.requestId, idempotencyKey: key }),
  );
}

/** What a refund is against: the charge named, or the PaymentIntent's latest charge. */
async function refundTarget(
  pool: pg.Pool,
  account: string,
  params: CreateRefundParams,
): Promise<RefundTarget | { response: ApiResponse }> {
  if (params.charge !== null) {
    const charge = await findCharge(pool, account, params.charge);
    if (!charge) return { response: resourceMissing("charge", params.charge, "charge", 400) };
    if (params.paymentIntent !== null && params.paymentIntent !== charge.payment_intent) {
      return {
        response: invalidRequest(
          `Charge ${charge.id} does not belong to PaymentIntent ${params.paymentIntent}.`,
          { param: "charge" },
        ),
      };
    }
    return { account, paymentIntent: charge.payment_intent, charge: charge.id };
  }
  const paymentIntent = params.paymentIntent!;
  const intent = await findPaymentIntent(pool, account, paymentIntent);
  if (!intent)
    return { response: resourceMissing("payment_intent", paymentIntent, "payment_intent", 400) };
  return { account, paymentIntent: intent.id, charge: intent.latest_charge };
}

/**
 * GET /v1/refunds/:id, within the caller's account only: another account's
 * refund is 404 `resource_missing` (param `refund`), as an unknown id is.
 * It takes no parameters; `expand[]` is not implemented here.
 */
export async function retrieveRefund(
  pool: pg.Pool,
  account: string,
  id: string,
  search: string,
): Promise<ApiResponse> {
  const read = readQuery(search, new Set());
  if (!read.ok) return read.response;
  const row = await findRefund(pool, account, id);
  return row ? jsonResponse(200, refundObject(row)) : resourceMissing("refund", id, "refund");
}

const LIST_PARAMS = new Set(["payment_intent", "charge", "limit", "starting_after"]);

/**
 * GET /v1/refunds: Stripe's list object of the caller's refunds, newest
 * first, `limit` (1–100, default 10) at a time, optionally only those of
 * one PaymentIntent or charge. `starting_after` (a refund id, the last of
 * the page before; what the SDK's auto-pagination sends) pages on, strictly
 * after that refund, so refunds made between two pages never shift the
 * later ones. `ending_before`, `created` and `expand` are not implemented,
 * so they are refused as unknown rather than ignored.
 */
export async function listRefunds(
  pool: pg.Pool,
  account: string,
  search: string,
): Promise<ApiResponse> {
  const read = readQuery(search, LIST_PARAMS);
  if (!read.ok) return read.response;
  const limit = parseLimit(read.params.limit);
  if (!limit.ok) return limit.response;
  let beforeSeq: string | null = null;
  const after = read.params.starting_after;
  if (after !== undefined) {
    const cursor = await findRefund(pool, account, after);
    if (!cursor) return resourceMissing("refund", after, "starting_after", 400);
    beforeSeq = cursor.seq;
  }
  // One more than asked for, to tell whether there is more.
  const rows = await listRefundRows(pool, account, {
    paymentIntent: read.params.payment_intent ?? null,
    charge: read.params.charge ?? null,
    beforeSeq,
    limit: limit.limit + 1,
  });
  return jsonResponse(200, {
    object: "list",
    url: "/v1/refunds",
    has_more: rows.length > limit.limit,
    data: rows.slice(0, limit.limit).map((row) => refundObject(row)),
  });
}
