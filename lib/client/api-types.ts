/**
 * What the checkout API sends and receives, as the browser sees it. Kept apart
 * from the code that talks to the API so that components can import the
 * shapes without pulling in the retry machinery.
 */

import type { OrderView } from "@/lib/orders/order-view";
import type { TestPaymentMethod } from "@/lib/payments/provider";

// Stripe's test payment methods the server accepts. The server's list is the
// one source: a type-only import, so none of its code reaches the browser,
// and a method added there fails to compile here until it has a label.
export type PaymentMethod = TestPaymentMethod;

const PAYMENT_METHOD_LABELS: Record<PaymentMethod, string> = {
  pm_card_visa: "Test card: Visa (succeeds)",
  pm_card_mastercard: "Test card: Mastercard (succeeds)",
  pm_card_chargeDeclined: "Test card: declined",
  pm_card_chargeDeclinedInsufficientFunds: "Test card: insufficient funds",
  pm_card_chargeDeclinedExpiredCard: "Test card: expired card",
  pm_card_chargeDeclinedProcessingError: "Test card: processing error",
  pm_card_authenticationRequired: "Test card: 3-D Secure",
};

/** The card whose bank asks the shopper to authenticate: its payments are settled by the provider's event. */
export const THREE_D_SECURE_CARD: PaymentMethod = "pm_card_authenticationRequired";

export const PAYMENT_METHODS: readonly { id: PaymentMethod; label: string }[] = (
  Object.keys(PAYMENT_METHOD_LABELS) as PaymentMethod[]
).map((id) => ({ id, label: PAYMENT_METHOD_LABELS[id] }));

export function isPaymentMethod(value: unknown): value is PaymentMethod {
  return PAYMENT_METHODS.some((method) => method.id === value);
}

export interface CartLine {
  sku: string;
  quantity: number;
}

export interface Cart {
  cartId: string;
  items: CartLine[];
}

// The order as the server shows it (lib/orders/order-view.ts), by the same
// type-only import: the browser reads exactly what the API writes.
export type Order = OrderView;
export type OrderItem = OrderView["items"][number];

/** RFC 9457 problem details, as the API returns them (402 adds `declineCode`). */
export interface Problem {
  type?: string;
  title: string;
  status: number;
  detail: string;
  declineCode?: string;
  [extension: string]: unknown;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function isOrder(value: unknown): value is Order {
  return (
    isRecord(value) &&
    typeof value.id === "string" &&
    typeof value.amount === "number" &&
    Array.isArray(value.items)
  );
}

/** The problem in a response body, or a stand-in built from the status line when the body is not one. */
export function toProblem(json: unknown, status: number, statusText = ""): Problem {
  const fallbackTitle = statusText || `HTTP ${status}`;
  if (isRecord(json) && typeof json.detail === "string") {
    return {
      ...json,
      title: typeof json.title === "string" ? json.title : fallbackTitle,
      status: typeof json.status === "number" ? json.status : status,
      detail: json.detail,
    };
  }
  return {
    title: fallbackTitle,
    status,
    detail: `The server answered ${status}${statusText ? ` ${statusText}` : ""}.`,
  };
}
