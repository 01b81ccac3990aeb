import type { Order } from "@/lib/client/api-types";

/**
 * Stand-ins for what the browser gives lib/client, so its real code runs in
 * Node under Vitest: sessionStorage, and the server's answers.
 */

/** sessionStorage's interface over a Map, optionally broken the way real browsers break it (quota, private modes). */
export class MemoryStorage implements Storage {
  readonly data = new Map<string, string>();
  failWrites = false;
  get length() {
    return this.data.size;
  }
  clear() {
    this.data.clear();
  }
  getItem(key: string) {
    return this.data.get(key) ?? null;
  }
  key(index: number) {
    return [...this.data.keys()][index] ?? null;
  }
  removeItem(key: string) {
    this.data.delete(key);
  }
  setItem(key: string, value: string) {
    if (this.failWrites) throw new DOMException("quota", "QuotaExceededError");
    this.data.set(key, value);
  }
}

/** A paid order as POST /api/orders answers it, for the cart `cartId`. */
export function sampleOrder(cartId: string): Order {
  return {
    id: "ord_123",
    object: "order",
    status: "paid",
    idempotencyKey: "8e03978e-40d5-43e8-bc93-6894a57f9324",
    source: "checkout",
    cartId,
    currency: "usd",
    amount: 3600,
    items: [
      {
        sku: "mug-ceramic-350",
        name: "Stoneware Mug",
        unitAmount: 1800,
        quantity: 2,
        amount: 3600,
      },
    ],
    payment: { id: "pay_1", status: "succeeded", paymentMethod: "pm_card_visa", refundedAmount: 0 },
    createdAt: "2025-01-01T00:00:00.000Z",
  };
}

/** A JSON answer as the API sends it: problem+json for errors. */
export function jsonAnswer(
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): Response {
  const contentType = status >= 400 ? "application/problem+json" : "application/json";
  return new Response(JSON.stringify(body), {
    status,
    headers: { "Content-Type": contentType, ...headers },
  });
}
