/**
 * What OncePay needs from a payment provider: charge an amount once. The
 * idempotency key passed along lets a provider that supports it (Stripe does)
 * recognise a repeated charge.
 */
export interface ChargeRequest {
  amount: number;
  currency: string;
  paymentMethod: string;
  idempotencyKey: string;
}

export type ChargeResult =
  | { status: "succeeded"; providerPaymentId: string }
  | { status: "declined"; providerPaymentId: string; declineCode: string; message: string };

export interface PaymentProvider {
  readonly name: string;
  charge(request: ChargeRequest): Promise<ChargeResult>;
}

/** Stripe's test payment methods that the shop accepts. */
export const TEST_PAYMENT_METHODS = ["pm_card_visa", "pm_card_chargeDeclined"] as const;
export type TestPaymentMethod = (typeof TEST_PAYMENT_METHODS)[number];
export const DEFAULT_PAYMENT_METHOD: TestPaymentMethod = "pm_card_visa";
