import { z } from "zod";
import type { ParseResult } from "@oncepay/idempotency";
import { parseWith } from "@/lib/http/field-errors";

/**
 * The largest refund one request may ask for, in minor units: far above any
 * cart (50 lines of at most 99), and inside a PostgreSQL integer.
 */
const MAX_REFUND_AMOUNT = 100_000_000;

/**
 * What a client sends: the amount, or nothing for all that is left. Strict:
 * a misspelt "amout" must be a 400, not a refund of everything.
 */
export const refundBodySchema = z.strictObject({
  amount: z
    .number()
    .int("amount must be a whole number of minor units (cents)")
    .min(1, "amount must be at least 1")
    .max(MAX_REFUND_AMOUNT)
    .optional()
    .describe(
      "How much to refund, in the currency's minor unit (cents); omitted, all that is left to refund.",
    ),
});

/**
 * A refund request as the engine runs it: the order from the path, the
 * amount from the body. It is what the key keeps for a resume, and what its
 * fingerprint covers, so the same key on another order's path is another
 * request (422), not a replay.
 */
export const refundRequestSchema = z.strictObject({
  orderId: z.uuid(),
  ...refundBodySchema.shape,
});
export type RefundRequest = z.infer<typeof refundRequestSchema>;

/** The operation's reading of its stored request (the path's order and the body's amount). */
export function parseRefundRequest(json: unknown): ParseResult<RefundRequest> {
  const parsed = parseWith(refundRequestSchema, json);
  return parsed.ok ? { ok: true, input: parsed.value } : parsed;
}
