import { createHash } from "node:crypto";
import { testCard, type TestCard } from "@/lib/payments/simulator/cards";
import type { StripeError } from "@/lib/payments/simulator/errors";
import type { ChargeRow, PaymentIntentRow } from "@/lib/payments/simulator/ledger";
import type { RefundRow } from "@/lib/payments/simulator/refund-ledger";

/**
 * The Stripe objects the API shows for the ledger's rows: PaymentIntent,
 * Charge, Refund and PaymentMethod, in Stripe's exact shape. Every field the
 * SDK's types declare always present is sent, `null` where nothing applies here
 * (no customers, Connect, shipping or reviews), as Stripe sends
 * it, so a client reads `null` and never `undefined`; the schema test checks
 * them against Stripe's spec and the SDK's types.
 */

/** What `expand[]` replaced: the objects themselves in place of their ids. */
export interface ExpandedFields {
  latestCharge?: ChargeRow;
  paymentMethod?: boolean;
}

export function paymentIntentObject(row: PaymentIntentRow, expanded: ExpandedFields = {}) {
  const amount = Number(row.amount);
  const created = Number(row.created);
  return {
    id: row.id,
    object: "payment_intent",
    allowed_payment_method_types: null,
    amount,
    amount_capturable: 0,
    amount_received: row.status === "succeeded" ? amount : 0,
    application: null,
    application_fee_amount: null,
    automatic_payment_methods: row.automatic_payment_methods,
    canceled_at: null,
    cancellation_reason: null,
    capture_method: "automatic",
    client_secret: row.client_secret,
    confirmation_method: "automatic",
    created,
    currency: row.currency,
    customer: null,
    customer_account: null,
    description: row.description,
    excluded_payment_method_types: null,
    last_payment_error: row.last_payment_error && lastPaymentError(row.last_payment_error, created),
    latest_charge:
      expanded.latestCharge && expanded.latestCharge.id === row.latest_charge
        ? chargeObject(expanded.latestCharge)
        : row.latest_charge,
    livemode: false,
    managed_payments: null,
    metadata: row.metadata,
    next_action: row.next_action ?? null,
    on_behalf_of: null,
    payment_method:
      expanded.paymentMethod && row.payment_method
        ? paymentMethodObject(row.payment_method, created)
        : row.payment_method,
    payment_method_configuration_details: null,
    payment_method_options: CARD_PAYMENT_METHOD_OPTIONS,
    payment_method_types: row.payment_method_types,
    payment_record: null,
    processing: null,
    receipt_email: null,
    review: null,
    setup_future_usage: null,
    shipping: null,
    source: null,
    statement_descriptor: null,
    statement_descriptor_suffix: null,
    status: row.status,
    transfer_group: null,
  };
}

/**
 * The stored decline, its payment method shown whole. Rows written before
 * the simulator sent the whole object keep only a stub, so it is drawn
 * again from its id, the same way for every row.
 */
function lastPaymentError(error: StripeError, created: number): StripeError {
  const stored = error.payment_method as { id?: unknown } | undefined;
  if (typeof stored?.id !== "string") return error;
  return { ...error, payment_method: paymentMethodObject(stored.id, created) };
}

// Stripe's defaults for a card payment that asked for nothing special (cards are all it takes here).
const CARD_PAYMENT_METHOD_OPTIONS = {
  card: {
    installments: null,
    mandate_options: null,
    network: null,
    request_three_d_secure: "automatic",
  },
};

export function chargeObject(row: ChargeRow) {
  const amount = Number(row.amount);
  const created = Number(row.created);
  const succeeded = row.status === "succeeded";
  const amountRefunded = Number(row.amount_refunded);
  const card = testCard(row.payment_method);
  return {
    id: row.id,
    object: "charge",
    amount,
    amount_captured: succeeded ? amount : 0,
    amount_refunded: amountRefunded,
    application: null,
    application_fee: null,
    application_fee_amount: null,
    balance_transaction: null,
    billing_details: NO_BILLING_DETAILS,
    calculated_statement_descriptor: null,
    captured: succeeded,
    created,
    currency: row.currency,
    customer: null,
    description: null,
    disputed: false,
    failure_balance_transaction: null,
    failure_code: row.failure_code,
    failure_message: row.failure_message,
    fraud_details: {},
    livemode: false,
    metadata: {},
    on_behalf_of: null,
    outcome: {
      advice_code: null,
      network_advice_code: null,
      network_decline_code: null,
      network_status: succeeded ? "approved_by_network" : "declined_by_network",
      reason: row.decline_code ?? row.failure_code,
      risk_level: "normal",
      seller_message: succeeded
        ? "Payment complete."
        : "The bank did not return any further details with this decline.",
      type: succeeded ? "authorized" : "issuer_declined",
    },
    paid: succeeded,
    payment_intent: row.payment_intent,
    payment_method: row.payment_method,
    payment_method_details: card && {
      card: chargeCardDetails(card, created, succeeded ? amount : null),
      type: "card",
    },
    receipt_email: null,
    receipt_number: null,
    receipt_url: null,
    // As at Stripe: true once the whole amount is refunded, not after a partial refund.
    refunded: succeeded && amountRefunded === amount,
    review: null,
    shipping: null,
    source: null,
    source_transfer: null,
    statement_descriptor: null,
    statement_descriptor_suffix: null,
    status: row.status,
    transfer_data: null,
    transfer_group: null,
  };
}

/**
 * A refund as Stripe shows one of a card payment. It has no balance
 * transaction, as the simulator's charges have none; its destination is
 * the card, with the acquirer's reference not yet known (`pending`), as a
 * card refund's is until the card network assigns one.
 */
export function refundObject(row: RefundRow) {
  return {
    id: row.id,
    object: "refund",
    amount: Number(row.amount),
    balance_transaction: null,
    charge: row.charge,
    created: Number(row.created),
    currency: row.currency,
    customer: null,
    customer_account: null,
    destination_details: {
      card: {
        reference_status: "pending",
        reference_type: "acquirer_reference_number",
        type: "refund",
      },
      type: "card",
    },
    metadata: row.metadata,
    payment_intent: row.payment_intent,
    payment_method: row.payment_method,
    reason: row.reason,
    receipt_number: null,
    source_transfer_reversal: null,
    status: row.status,
    transfer_reversal: null,
  };
}

function chargeCardDetails(card: TestCard, created: number, amountAuthorized: number | null) {
  return {
    amount_authorized: amountAuthorized,
    authorization_code: null,
    brand: card.brand,
    checks: UNCHECKED,
    country: TEST_CARD_COUNTRY,
    electronic_commerce_indicator: null,
    ...expiry(created),
    fingerprint: fingerprintOf(card),
    funding: card.funding,
    installments: null,
    last4: card.last4,
    mandate: null,
    network: card.brand,
    network_token: { used: false },
    network_transaction_id: null,
    regulated_status: "unregulated",
    three_d_secure: null,
    transaction_link_id: null,
    wallet: null,
  };
}

/**
 * A test PaymentMethod (`pm_card_visa`…) as Stripe shows it, with its card.
 * `created` is when the payment used it: the simulator makes no separate
 * PaymentMethod objects.
 */
export function paymentMethodObject(paymentMethod: string, created: number) {
  const card = testCard(paymentMethod);
  return {
    id: paymentMethod,
    object: "payment_method",
    allow_redisplay: "unspecified",
    billing_details: NO_BILLING_DETAILS,
    card: card && {
      brand: card.brand,
      checks: UNCHECKED,
      country: TEST_CARD_COUNTRY,
      display_brand: DISPLAY_BRANDS[card.brand],
      ...expiry(created),
      fingerprint: fingerprintOf(card),
      funding: card.funding,
      generated_from: null,
      last4: card.last4,
      networks: { available: [card.brand], preferred: null },
      regulated_status: "unregulated",
      three_d_secure_usage: { supported: true },
      wallet: null,
    },
    created,
    customer: null,
    customer_account: null,
    livemode: false,
    metadata: {},
    type: "card",
  };
}

const NO_BILLING_DETAILS = {
  address: { city: null, country: null, line1: null, line2: null, postal_code: null, state: null },
  email: null,
  name: null,
  phone: null,
  tax_id: null,
};

const UNCHECKED = {
  address_line1_check: null,
  address_postal_code_check: null,
  cvc_check: "unchecked",
};

// Stripe's test cards are issued in the United States.
const TEST_CARD_COUNTRY = "US";

const DISPLAY_BRANDS: Record<TestCard["brand"], string> = {
  visa: "visa",
  mastercard: "mastercard",
  amex: "american_express",
  discover: "discover",
};

/**
 * Stripe's test cards take any future expiry date; this one is always the
 * December after the payment, so a card shown with a payment is never
 * expired at that payment (the expired-card decline is the card's outcome,
 * not its date, as at Stripe).
 */
function expiry(created: number): { exp_month: number; exp_year: number } {
  return { exp_month: 12, exp_year: new Date(created * 1000).getUTCFullYear() + 1 };
}

/** One fingerprint per card number, as Stripe gives: the same card reads the same everywhere. */
function fingerprintOf(card: TestCard): string {
  return createHash("sha256")
    .update(`${card.brand}:${card.funding}:${card.last4}`)
    .digest("base64url")
    .replace(/[-_]/g, "")
    .slice(0, 16);
}
