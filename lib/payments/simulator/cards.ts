/**
 * Stripe's test payment methods and what confirming a payment with each one
 * does. The names, codes and messages are Stripe's own, so code written
 * against the simulator handles Stripe's test mode the same way.
 * https://docs.stripe.com/testing#declined-payments
 */
export type CardOutcome =
  | { kind: "succeeded" }
  | {
      kind: "failed";
      /** The error's `code`: `card_declined` for issuer declines, `processing_error` for a processor failure. */
      code: "card_declined" | "processing_error";
      /** Stripe's reason for an issuer decline; absent for a processing error. */
      declineCode?: "generic_decline" | "insufficient_funds";
      message: string;
    };

export interface TestCard {
  brand: string;
  last4: string;
  outcome: CardOutcome;
}

const TEST_CARDS: Record<string, TestCard> = {
  pm_card_visa: { brand: "visa", last4: "4242", outcome: { kind: "succeeded" } },
  pm_card_chargeDeclined: {
    brand: "visa",
    last4: "0002",
    outcome: { kind: "failed", code: "card_declined", declineCode: "generic_decline", message: "Your card was declined." },
  },
  pm_card_chargeDeclinedInsufficientFunds: {
    brand: "visa",
    last4: "9995",
    outcome: { kind: "failed", code: "card_declined", declineCode: "insufficient_funds", message: "Your card has insufficient funds." },
  },
  pm_card_chargeDeclinedProcessingError: {
    brand: "visa",
    last4: "0119",
    outcome: { kind: "failed", code: "processing_error", message: "An error occurred while processing your card. Try again in a little bit." },
  },
};

export function testCard(paymentMethod: string): TestCard | undefined {
  return Object.hasOwn(TEST_CARDS, paymentMethod) ? TEST_CARDS[paymentMethod] : undefined;
}

export const TEST_CARD_PAYMENT_METHODS = Object.keys(TEST_CARDS);
