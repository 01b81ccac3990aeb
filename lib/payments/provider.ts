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
  /**
   * Extra metadata for the provider's record of the charge (the lab tags the
   * charges of its broken strategies with it, to find them again). The
   * provider key's own entry always wins over one of the same name. The real
   * checkout never sets it: a resumed attempt must send exactly the
   * parameters of the first, since Stripe compares the parameters sent under
   * one idempotency key and refuses different ones.
   */
  metadata?: Record<string, string>;
  /**
   * Where the provider sends the shopper back after 3-D Secure. The same
   * for every attempt of one charge (it is one of the parameters the
   * provider compares under one key): the shop's configured address.
   */
  returnUrl?: string;
}

/**
 * A charge's definite outcome, or (requires_action) the provider's word that
 * it waits for the shopper to authenticate at `redirectUrl`, after which
 * its event, or a read of the payment, settles it. Also kept with the idempotency key once known
 * (recovery point `charged`), so it has a schema to be read back with.
 */
export const chargeResultSchema = z.discriminatedUnion("status", [
  z.object({ status: z.literal("succeeded"), providerPaymentId: z.string().min(1) }),
  z.object({
    status: z.literal("declined"),
    providerPaymentId: z.string().min(1),
    declineCode: z.string().min(1),
    message: z.string(),
  }),
  z.object({
    status: z.literal("requires_action"),
    providerPaymentId: z.string().min(1),
    redirectUrl: z.url({ protocol: /^https?$/ }),
  }),
]);
export type ChargeResult = z.infer<typeof chargeResultSchema>;

export interface PaymentProvider {
  readonly name: string;
  /** Resolves with a success or a decline; throws PaymentProviderError when neither is known. */
  charge(request: ChargeRequest): Promise<ChargeResult>;
}

/**
 * A refund of (part of) a charge OncePay made. Its own interface, not a
 * method of PaymentProvider: the providers that only charge (test fakes)
 * stay as they are.
 */
export interface RefundRequest {
  /** The PaymentIntent whose charge is refunded (ChargeResult.providerPaymentId). */
  providerPaymentId: string;
  /** Minor units, > 0. */
  amount: number;
  /** The provider's Idempotency-Key: the same for every attempt of one refund. */
  idempotencyKey: string;
}

/** A refund's definite outcome; kept with the shop's idempotency key, so it has a schema. */
export const refundResultSchema = z.discriminatedUnion("status", [
  z.object({
    status: z.literal("succeeded"),
    providerRefundId: z.string().min(1),
    amount: z.number().int().positive(),
  }),
  // The provider refused this refund for good (amount_too_large, charge_already_refunded, …): nothing was refunded.
  z.object({ status: z.literal("refused"), code: z.string().min(1), message: z.string() }),
]);
export type RefundResult = z.infer<typeof refundResultSchema>;

export interface RefundProvider {
  readonly name: string;
  /** Resolves with a refund or the provider's refusal; throws PaymentProviderError ("unknown" or "rejected") when neither is known. */
  refund(request: RefundRequest): Promise<RefundResult>;
}

/**
 * "unknown": the charge may or may not have happened; repeat it with the same
 * idempotency key. "rejected": this request was refused, so it charged
 * nothing, and repeating will not help. "absent": the provider can no longer
 * charge under this idempotency key (it keeps answering a stored failure)
 * and a lookup proved that no charge was made under it: the charge must be
 * asked for afresh, under a new key. A refund's error means the same with
 * "refunded" for "charged", and is never "absent".
 */
export type ProviderErrorOutcome = "unknown" | "rejected" | "absent";

/** A charge that ended neither in success nor in a decline, or a refund neither made nor refused. */
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

/** A PaymentIntent as OncePay reads it back from the provider. */
export interface ProviderPayment {
  id: string;
  status: string;
  amount: number;
  currency: string;
  createdAt: Date;
  metadata: Record<string, string>;
}

/** One attempt to move money for a PaymentIntent. */
export interface ProviderCharge {
  id: string;
  paymentIntentId: string;
  status: string;
  amount: number;
  currency: string;
  failureCode: string | null;
  createdAt: Date;
}

/** A refund as OncePay reads it back from the provider (for the ledger). */
export interface ProviderRefund {
  id: string;
  paymentIntentId: string;
  amount: number;
  currency: string;
  status: string;
  createdAt: Date;
  metadata: Record<string, string>;
}

/**
 * The most PaymentIntents one findPayments call gathers: a lab storm makes at
 * most 200, so this leaves room while bounding how long a lookup pages.
 */
export const MAX_FOUND_PAYMENTS = 1000;

/**
 * What the provider holds, read back: the ledger that shows every order was
 * charged once. Reading only; nothing here can charge.
 */
export interface PaymentRecords {
  /**
   * Every PaymentIntent whose metadata holds all these pairs, newest first,
   * paging through the provider's search (at most MAX_FOUND_PAYMENTS). Keys
   * and values must be non-empty and of `[A-Za-z0-9:_-]` (uuids, provider
   * keys `oncepay:<uuid>:<base64url hash>`), or it throws a plain Error before asking
   * anything: they are written into the provider's query language, and
   * nothing in that alphabet can close a quote or start another clause.
   */
  findPayments(metadata: Record<string, string>): Promise<ProviderPayment[]>;
  /** The charges of one PaymentIntent, newest first. */
  chargesOf(paymentIntentId: string): Promise<ProviderCharge[]>;
  /** The refunds of one PaymentIntent, newest first, every page of them. */
  refundsOf(paymentIntentId: string): Promise<ProviderRefund[]>;
  /**
   * Where one payment stands now: succeeded, declined, or still waiting
   * for the shopper (requires_action). Throws PaymentLookupError when the
   * provider cannot be read, or the payment is in no state of those.
   */
  paymentOutcome(providerPaymentId: string): Promise<ChargeResult>;
}

/** Reading the provider's records failed (unreachable, refused): the caller shows that, it is not a charge outcome. */
export class PaymentLookupError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "PaymentLookupError";
  }
}

/**
 * Stripe's test payment methods that the shop accepts: two cards that pay,
 * one that asks for 3-D Secure first, and one of each kind of failure a shopper can meet (an issuer decline, a
 * card detail the issuer refuses, a processor error).
 */
export const TEST_PAYMENT_METHODS = [
  "pm_card_visa",
  "pm_card_mastercard",
  "pm_card_chargeDeclined",
  "pm_card_chargeDeclinedInsufficientFunds",
  "pm_card_chargeDeclinedExpiredCard",
  "pm_card_chargeDeclinedProcessingError",
  "pm_card_authenticationRequired",
] as const;
export type TestPaymentMethod = (typeof TEST_PAYMENT_METHODS)[number];
export const DEFAULT_PAYMENT_METHOD: TestPaymentMethod = "pm_card_visa";
