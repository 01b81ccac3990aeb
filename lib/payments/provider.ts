import { z } from "zod";

/**
 * What OncePay needs from a payment provider: charge an amount once. The
 * idempotency key passed along lets a provider that supports it (Stripe does)
 * recognise a repeated charge and answer it with the first one.
 */
export interface ChargeRequest {
  amount: number;
  currency: string;
  paymentMethod: string;
  idempotencyKey: string;
  /**
   * When this charge (this idempotency key) was first asked for. A provider
   * that reconciles by looking its charge up (see stripe-provider.ts) needs
   * it: a lookup that finds nothing proves nothing about a charge newer than
   * the provider's search index. Unknown for a key from before it was kept.
   */
  firstAskedAt?: Date;
}

/**
 * A charge's definite outcome. Also kept with the idempotency key once known
 * (recovery point `charged`), so it has a schema to be read back with.
 */
export const chargeResultSchema = z.discriminatedUnion("status", [
  z.object({ status: z.literal("succeeded"), providerPaymentId: z.string().min(1) }),
  z.object({ status: z.literal("declined"), providerPaymentId: z.string().min(1), declineCode: z.string().min(1), message: z.string() }),
]);
export type ChargeResult = z.infer<typeof chargeResultSchema>;

export interface PaymentProvider {
  readonly name: string;
  /** Resolves with a success or a decline; throws PaymentProviderError when neither is known. */
  charge(request: ChargeRequest): Promise<ChargeResult>;
}

/**
 * "unknown": the charge may or may not have happened; repeat it with the same
 * idempotency key. "rejected": this request was refused, so it charged
 * nothing, and repeating will not help. "absent": the provider can no longer
 * charge under this idempotency key (it keeps answering a stored failure)
 * and a lookup proved that no charge was made under it: the charge must be
 * asked for afresh, under a new key.
 */
export type ProviderErrorOutcome = "unknown" | "rejected" | "absent";

/** A charge that ended neither in success nor in a decline. */
export class PaymentProviderError extends Error {
  constructor(
    message: string,
    readonly outcome: ProviderErrorOutcome,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = "PaymentProviderError";
  }
}

/**
 * Stripe's test payment methods that the shop accepts: two cards that pay,
 * and one of each kind of failure a shopper can meet (an issuer decline, a
 * card detail the issuer refuses, a processor error).
 */
export const TEST_PAYMENT_METHODS = [
  "pm_card_visa",
  "pm_card_mastercard",
  "pm_card_chargeDeclined",
  "pm_card_chargeDeclinedInsufficientFunds",
  "pm_card_chargeDeclinedExpiredCard",
  "pm_card_chargeDeclinedProcessingError",
] as const;
export type TestPaymentMethod = (typeof TEST_PAYMENT_METHODS)[number];
export const DEFAULT_PAYMENT_METHOD: TestPaymentMethod = "pm_card_visa";
