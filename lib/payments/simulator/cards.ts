import type { StripeErrorCode } from "@/lib/payments/simulator/errors";

/**
 * Stripe's test payment methods and what confirming a payment with each one
 * does. The names, brands, last four digits, codes and messages are Stripe's
 * own, so code written against the simulator handles Stripe's test mode the
 * same way. https://docs.stripe.com/testing#cards and #declined-payments
 */
export type CardOutcome =
  | { kind: "succeeded" }
  /**
   * The issuer asks the holder to authenticate (3-D Secure): confirming
   * leaves the intent `requires_action`, and the challenge page
   * (authentication.ts) settles it, succeeded or failed.
   */
  | { kind: "requires_authentication" }
  | {
      kind: "failed";
      /**
       * The error's `code`: `card_declined` for an issuer decline,
       * `expired_card` and `incorrect_cvc` for card details the issuer
       * refused, `processing_error` for a processor failure.
       */
      code: Extract<
        StripeErrorCode,
        "card_declined" | "expired_card" | "incorrect_cvc" | "processing_error"
      >;
      /** Stripe's reason for the decline; absent for a processing error, as at Stripe. */
      declineCode?:
        | "generic_decline"
        | "insufficient_funds"
        | "lost_card"
        | "stolen_card"
        | "fraudulent"
        | "expired_card"
        | "incorrect_cvc";
      /** The card detail at fault, where Stripe names one. */
      param?: "exp_month" | "cvc";
      message: string;
    };

export interface TestCard {
  brand: "visa" | "mastercard" | "amex" | "discover";
  /** Debit cards charge the same way here; Stripe shows the difference as `card.funding`. */
  funding: "credit" | "debit";
  last4: string;
  outcome: CardOutcome;
}

const SUCCEEDS: CardOutcome = { kind: "succeeded" };

// Stripe shows the holder no reason for these, only that the card was declined.
const declined = (
  declineCode: "generic_decline" | "lost_card" | "stolen_card" | "fraudulent",
): CardOutcome => ({
  kind: "failed",
  code: "card_declined",
  declineCode,
  message: "Your card was declined.",
});

const GENERIC_DECLINE = declined("generic_decline");
const INSUFFICIENT_FUNDS: CardOutcome = {
  kind: "failed",
  code: "card_declined",
  declineCode: "insufficient_funds",
  message: "Your card has insufficient funds.",
};
const LOST_CARD = declined("lost_card");
const STOLEN_CARD = declined("stolen_card");

// Stripe names several test cards twice: the older names without the brand
// (pm_card_chargeDeclined…) and the newer ones with it (pm_card_visa_chargeDeclined…).
// Both are still accepted there, so both are here, with the same card behind them.
const TEST_CARDS: Record<string, TestCard> = {
  pm_card_visa: { brand: "visa", funding: "credit", last4: "4242", outcome: SUCCEEDS },
  pm_card_visa_debit: { brand: "visa", funding: "debit", last4: "5556", outcome: SUCCEEDS },
  pm_card_mastercard: { brand: "mastercard", funding: "credit", last4: "4444", outcome: SUCCEEDS },
  pm_card_mastercard_debit: {
    brand: "mastercard",
    funding: "debit",
    last4: "8210",
    outcome: SUCCEEDS,
  },
  pm_card_amex: { brand: "amex", funding: "credit", last4: "0005", outcome: SUCCEEDS },
  pm_card_discover: { brand: "discover", funding: "credit", last4: "1117", outcome: SUCCEEDS },
  // 4000 0027 6000 3184: authentication required on every payment.
  pm_card_authenticationRequired: {
    brand: "visa",
    funding: "credit",
    last4: "3184",
    outcome: { kind: "requires_authentication" },
  },
  pm_card_chargeDeclined: {
    brand: "visa",
    funding: "credit",
    last4: "0002",
    outcome: GENERIC_DECLINE,
  },
  pm_card_visa_chargeDeclined: {
    brand: "visa",
    funding: "credit",
    last4: "0002",
    outcome: GENERIC_DECLINE,
  },
  pm_card_chargeDeclinedInsufficientFunds: {
    brand: "visa",
    funding: "credit",
    last4: "9995",
    outcome: INSUFFICIENT_FUNDS,
  },
  pm_card_visa_chargeDeclinedInsufficientFunds: {
    brand: "visa",
    funding: "credit",
    last4: "9995",
    outcome: INSUFFICIENT_FUNDS,
  },
  pm_card_chargeDeclinedLostCard: {
    brand: "visa",
    funding: "credit",
    last4: "9987",
    outcome: LOST_CARD,
  },
  pm_card_visa_chargeDeclinedLostCard: {
    brand: "visa",
    funding: "credit",
    last4: "9987",
    outcome: LOST_CARD,
  },
  pm_card_chargeDeclinedStolenCard: {
    brand: "visa",
    funding: "credit",
    last4: "9979",
    outcome: STOLEN_CARD,
  },
  pm_card_visa_chargeDeclinedStolenCard: {
    brand: "visa",
    funding: "credit",
    last4: "9979",
    outcome: STOLEN_CARD,
  },
  pm_card_chargeDeclinedFraudulent: {
    brand: "visa",
    funding: "credit",
    last4: "0019",
    outcome: declined("fraudulent"),
  },
  pm_card_chargeDeclinedExpiredCard: {
    brand: "visa",
    funding: "credit",
    last4: "0069",
    outcome: {
      kind: "failed",
      code: "expired_card",
      declineCode: "expired_card",
      param: "exp_month",
      message: "Your card has expired.",
    },
  },
  pm_card_chargeDeclinedIncorrectCvc: {
    brand: "visa",
    funding: "credit",
    last4: "0127",
    outcome: {
      kind: "failed",
      code: "incorrect_cvc",
      declineCode: "incorrect_cvc",
      param: "cvc",
      message: "Your card's security code is incorrect.",
    },
  },
  pm_card_chargeDeclinedProcessingError: {
    brand: "visa",
    funding: "credit",
    last4: "0119",
    outcome: {
      kind: "failed",
      code: "processing_error",
      message: "An error occurred while processing your card. Try again in a little bit.",
    },
  },
};

export function testCard(paymentMethod: string): TestCard | undefined {
  return Object.hasOwn(TEST_CARDS, paymentMethod) ? TEST_CARDS[paymentMethod] : undefined;
}

export const TEST_CARD_PAYMENT_METHODS = Object.keys(TEST_CARDS);
