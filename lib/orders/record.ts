import { randomUUID } from "node:crypto";
import type { OrderSource } from "@/lib/generated/prisma/enums";
import type { StoredResponse } from "@oncepay/idempotency";
import { problemType, storedProblem } from "@/lib/http/problem";
import type { PricedCart } from "@/lib/orders/cart";
import { orderLocation, orderView } from "@/lib/orders/order-view";
import type { ChargeResult } from "@/lib/payments/provider";

/**
 * What one charge produces: a paid order with its items and payment, or a
 * declined payment alone, and the response to send (and, under a key, to
 * store). The rows are plain data, named as the Prisma models name their
 * fields: the idempotency store writes them with the completed key, in one
 * commit (lib/orders/order-rows-sql.ts as SQL, or Prisma's nested create),
 * and the lab's strategies write them by themselves.
 */
export interface ChargeRecord {
  accountId: string;
  /** The key row the charge ran under; null for the lab's strategies, which keep keys of their own, or none. */
  keyId: string | null;
  /** The client's Idempotency-Key, kept with the order after the key row is reaped; null when none was sent. */
  idempotencyKey: string | null;
  /** Which code path writes it: the checkout, or one of the lab's broken strategies. */
  source: OrderSource;
  /** The idempotency key the provider saw: the handle to find the charge there again. */
  providerKey: string;
  cart: PricedCart;
  charge: ChargeResult;
  provider: string;
}

export interface NewPayment {
  accountId: string;
  idempotencyKeyId: string | null;
  provider: string;
  providerPaymentId: string;
  providerKey: string;
  paymentMethod: string;
  status: "succeeded" | "declined" | "pending";
  amount: number;
  currency: string;
  declineCode: string | null;
}

export interface NewOrder {
  id: string;
  accountId: string;
  idempotencyKeyId: string | null;
  idemKey: string | null;
  source: OrderSource;
  cartId: string;
  /** pending: its payment waits for the shopper's authentication; a paid order also gets its shipment. */
  status: "paid" | "pending";
  currency: string;
  totalAmount: number;
  createdAt: Date;
  items: { sku: string; name: string; unitAmount: number; quantity: number }[];
}

/** The rows one charge writes: the order (paid or pending) with its payment, or the declined payment alone. */
export type OrderRows =
  { order: NewOrder; payment: NewPayment } | { order: null; payment: NewPayment };

export interface ChargeWrite {
  response: StoredResponse;
  rows: OrderRows;
}

export function chargeWrite(record: ChargeRecord): ChargeWrite {
  switch (record.charge.status) {
    case "succeeded":
      return orderWrite(record, "paid");
    case "requires_action":
      return orderWrite(record, "pending");
    case "declined":
      return declineWrite(record);
  }
}

function paymentOf(record: ChargeRecord, declineCode: string | null): NewPayment {
  return {
    accountId: record.accountId,
    idempotencyKeyId: record.keyId,
    provider: record.provider,
    providerPaymentId: record.charge.providerPaymentId,
    providerKey: record.providerKey,
    paymentMethod: record.cart.paymentMethod,
    status:
      declineCode !== null
        ? "declined"
        : record.charge.status === "requires_action"
          ? "pending"
          : "succeeded",
    amount: record.cart.total,
    currency: record.cart.currency,
    declineCode,
  };
}

/**
 * The order, its items and its payment. Its id and time are minted here
 * rather than by the database, so the response is whole before anything is
 * written, and the key can store it in the commit that writes the order.
 * The time is the order's label (shown, and sorted by), never compared with
 * a lease, so this instance's clock may set it.
 *
 * A pending order (3-D Secure) is answered 202 with where to send the
 * shopper (`nextAction`): that answer is the key's, so every replay sends
 * the shopper to the same page; the order itself then tells how it ended.
 */
function orderWrite(record: ChargeRecord, status: NewOrder["status"]): ChargeWrite {
  const { cart } = record;
  const order: NewOrder = {
    id: randomUUID(),
    accountId: record.accountId,
    idempotencyKeyId: record.keyId,
    idemKey: record.idempotencyKey,
    source: record.source,
    cartId: cart.cartId,
    status,
    currency: cart.currency,
    totalAmount: cart.total,
    createdAt: new Date(),
    items: cart.lines.map((line) => ({
      sku: line.product.sku,
      name: line.product.name,
      unitAmount: line.product.unitAmount,
      quantity: line.quantity,
    })),
  };
  const payment = paymentOf(record, null);
  const { charge } = record;
  return {
    response: {
      status: charge.status === "requires_action" ? 202 : 201,
      headers: { "Content-Type": "application/json", Location: orderLocation(order.id) },
      body: {
        ...orderView({ ...order, payment }),
        ...(charge.status === "requires_action" && {
          nextAction: { type: "redirect", url: charge.redirectUrl },
        }),
      },
    },
    rows: { order, payment },
  };
}

function declineWrite(record: ChargeRecord): ChargeWrite {
  const { charge } = record;
  if (charge.status !== "declined") throw new Error("declineWrite called for a successful charge");
  return {
    response: storedProblem({
      type: problemType("payment-declined"),
      title: "Payment declined",
      status: 402,
      detail: `${charge.message} Nothing was charged. Try another payment method; that is a new checkout with a new key.`,
      declineCode: charge.declineCode,
      paymentId: charge.providerPaymentId,
    }),
    rows: { order: null, payment: paymentOf(record, charge.declineCode) },
  };
}
