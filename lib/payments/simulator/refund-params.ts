import type { ApiResponse } from "@/lib/payments/simulator/errors";
import type { FormObject } from "@/lib/payments/simulator/form";
import {
  fail,
  ParamError,
  parseMetadata,
  rejectUnknown,
  requiredParam,
} from "@/lib/payments/simulator/params";

/**
 * The parameters of `POST /v1/refunds` that the simulator supports, checked
 * as params.ts checks a PaymentIntent's: a bad request is 400 before its
 * Idempotency-Key is claimed, so nothing is stored under the key. What the
 * refund is against (a PaymentIntent, or one of its charges) must be named;
 * Stripe's other ways to refund (a customer balance, `origin`) and its
 * Connect options are refused as unknown parameters.
 */
export const REFUND_REASONS = ["duplicate", "fraudulent", "requested_by_customer"] as const;
export type RefundReason = (typeof REFUND_REASONS)[number];

export interface CreateRefundParams {
  paymentIntent: string | null;
  charge: string | null;
  /** Minor units; null refunds whatever is left unrefunded, as Stripe does without `amount`. */
  amount: number | null;
  reason: RefundReason | null;
  metadata: Record<string, string>;
}

export type RefundParamsResult =
  { ok: true; params: CreateRefundParams } | { ok: false; response: ApiResponse };

const KNOWN = new Set(["payment_intent", "charge", "amount", "reason", "metadata"]);

/** An optional parameter that, when sent, must not be empty (an attempt to unset it) or blank. */
function optionalParam(form: FormObject, name: string): string | null {
  return form[name] === undefined ? null : requiredParam(form, name);
}

function parseAmount(form: FormObject): number | null {
  const text = optionalParam(form, "amount");
  if (text === null) return null;
  if (!/^\d{1,12}$/.test(text))
    fail(`Invalid integer: ${text}`, "amount", "parameter_invalid_integer");
  const amount = Number(text);
  // No upper bound here: more than the charge has left is the refund's own
  // refusal (amount_too_large), decided against the charge under its lock.
  if (amount < 1) fail("Invalid positive integer", "amount", "parameter_invalid_integer");
  return amount;
}

function parseReason(form: FormObject): RefundReason | null {
  const reason = optionalParam(form, "reason");
  if (reason === null) return null;
  if (!(REFUND_REASONS as readonly string[]).includes(reason))
    fail(
      "Invalid reason: must be one of duplicate, fraudulent, or requested_by_customer",
      "reason",
    );
  return reason as RefundReason;
}

export function parseCreateRefund(form: FormObject): RefundParamsResult {
  try {
    rejectUnknown(form, KNOWN);
    const paymentIntent = optionalParam(form, "payment_intent");
    const charge = optionalParam(form, "charge");
    if (paymentIntent === null && charge === null)
      fail("Missing required param: payment_intent.", "payment_intent", "parameter_missing");
    return {
      ok: true,
      params: {
        paymentIntent,
        charge,
        amount: parseAmount(form),
        reason: parseReason(form),
        metadata: parseMetadata(form),
      },
    };
  } catch (error) {
    if (error instanceof ParamError) return { ok: false, response: error.response };
    throw error;
  }
}
