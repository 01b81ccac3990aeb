import type Stripe from "stripe";

/**
 * The fields the `stripe` SDK's types declare always present (not `?`) on
 * the objects the payment simulator answers. Stripe sends each of them,
 * `null` where nothing applies; an object without one reads `undefined`
 * where the SDK's type promises `T | null`. Stripe's spec (an older API
 * version) marks fewer fields required, so this list completes the schema
 * check. Each list is the SDK's own, to the field: `satisfies` fails the
 * type check if a field is missing or one is not in the type.
 */
type AlwaysPresent<T> = { [K in keyof T]-?: object extends Pick<T, K> ? never : K }[keyof T];
type FieldList<T> = Record<AlwaysPresent<T>, true>;

export const PAYMENT_INTENT_FIELDS = {
  id: true,
  object: true,
  allowed_payment_method_types: true,
  amount: true,
  amount_capturable: true,
  amount_received: true,
  application: true,
  application_fee_amount: true,
  automatic_payment_methods: true,
  canceled_at: true,
  cancellation_reason: true,
  capture_method: true,
  client_secret: true,
  confirmation_method: true,
  created: true,
  currency: true,
  customer: true,
  customer_account: true,
  description: true,
  excluded_payment_method_types: true,
  last_payment_error: true,
  latest_charge: true,
  livemode: true,
  managed_payments: true,
  metadata: true,
  next_action: true,
  on_behalf_of: true,
  payment_method: true,
  payment_method_configuration_details: true,
  payment_method_options: true,
  payment_method_types: true,
  payment_record: true,
  processing: true,
  receipt_email: true,
  review: true,
  setup_future_usage: true,
  shipping: true,
  source: true,
  statement_descriptor: true,
  statement_descriptor_suffix: true,
  status: true,
  transfer_group: true,
} as const satisfies FieldList<Stripe.PaymentIntent>;

export const CHARGE_FIELDS = {
  id: true,
  object: true,
  amount: true,
  amount_captured: true,
  amount_refunded: true,
  application: true,
  application_fee: true,
  application_fee_amount: true,
  balance_transaction: true,
  billing_details: true,
  calculated_statement_descriptor: true,
  captured: true,
  created: true,
  currency: true,
  customer: true,
  description: true,
  disputed: true,
  failure_balance_transaction: true,
  failure_code: true,
  failure_message: true,
  fraud_details: true,
  livemode: true,
  metadata: true,
  on_behalf_of: true,
  outcome: true,
  paid: true,
  payment_intent: true,
  payment_method: true,
  payment_method_details: true,
  receipt_email: true,
  receipt_number: true,
  receipt_url: true,
  refunded: true,
  review: true,
  shipping: true,
  source: true,
  source_transfer: true,
  statement_descriptor: true,
  statement_descriptor_suffix: true,
  status: true,
  transfer_data: true,
  transfer_group: true,
} as const satisfies FieldList<Stripe.Charge>;

export const PAYMENT_METHOD_FIELDS = {
  id: true,
  object: true,
  billing_details: true,
  created: true,
  customer: true,
  customer_account: true,
  livemode: true,
  metadata: true,
  type: true,
} as const satisfies FieldList<Stripe.PaymentMethod>;

export const PAYMENT_METHOD_CARD_FIELDS = {
  brand: true,
  checks: true,
  country: true,
  display_brand: true,
  exp_month: true,
  exp_year: true,
  funding: true,
  generated_from: true,
  last4: true,
  networks: true,
  regulated_status: true,
  three_d_secure_usage: true,
  wallet: true,
} as const satisfies FieldList<Stripe.PaymentMethod.Card>;

/** The fields of `fields` that `object` lacks (absent, not null): none for an object as Stripe sends it. */
export function missingFields(object: unknown, fields: Record<string, true>): string[] {
  const present = object !== null && typeof object === "object" ? object : {};
  return Object.keys(fields).filter((field) => !Object.hasOwn(present, field));
}
