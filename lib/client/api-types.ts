/**
 * What the checkout API sends and receives, as the browser sees it. Kept apart
 * from the code that talks to the API so that components can import the
 * shapes without pulling in the retry machinery.
 */

// Stripe's test payment methods the server accepts (lib/payments/provider.ts).
export type PaymentMethod =
  | "pm_card_visa"
  | "pm_card_chargeDeclined"
  | "pm_card_chargeDeclinedInsufficientFunds"
  | "pm_card_chargeDeclinedProcessingError";

export const PAYMENT_METHODS: readonly { id: PaymentMethod; label: string }[] = [
  { id: "pm_card_visa", label: "Test card: Visa (succeeds)" },
  { id: "pm_card_chargeDeclined", label: "Test card: declined" },
  { id: "pm_card_chargeDeclinedInsufficientFunds", label: "Test card: insufficient funds" },
  { id: "pm_card_chargeDeclinedProcessingError", label: "Test card: processing error" },
];

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

export interface OrderItem {
  sku: string;
  name: string;
  unitAmount: number;
  quantity: number;
  amount: number;
}

export interface Order {
  id: string;
  object: "order";
  status: "paid";
  cartId: string;
  currency: string;
  amount: number;
  items: OrderItem[];
  payment: { id: string; status: string; paymentMethod: string };
  createdAt: string;
}

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
  return isRecord(value) && typeof value.id === "string" && typeof value.amount === "number" && Array.isArray(value.items);
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
  return { title: fallbackTitle, status, detail: `The server answered ${status}${statusText ? ` ${statusText}` : ""}.` };
}
