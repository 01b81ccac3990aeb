import type { Transaction } from "@/lib/db/client";
import type { OrderSource } from "@/lib/generated/prisma/enums";
import type { StoredResponse } from "@/lib/idempotency/stored-response";
import { problemType, PROBLEM_CONTENT_TYPE } from "@/lib/http/problem";
import type { PricedCart } from "@/lib/orders/cart";
import { orderLocation, orderView } from "@/lib/orders/order-view";
import type { ChargeResult } from "@/lib/payments/provider";

/**
 * Writes what one charge produced: a paid order with its items and payment,
 * or a declined payment alone. Each returns the response to send (and, under
 * a key, to store).
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

export async function recordPaidOrder(tx: Transaction, { accountId, keyId, idempotencyKey, source, providerKey, cart, charge, provider }: ChargeRecord): Promise<StoredResponse> {
  const order = await tx.order.create({
    data: {
      accountId,
      idempotencyKeyId: keyId,
      idemKey: idempotencyKey,
      source,
      cartId: cart.cartId,
      status: "paid",
      currency: cart.currency,
      totalAmount: cart.total,
      items: {
        create: cart.lines.map((line) => ({
          sku: line.product.sku,
          name: line.product.name,
          unitAmount: line.product.unitAmount,
          quantity: line.quantity,
        })),
      },
      payment: {
        create: {
          accountId,
          idempotencyKeyId: keyId,
          provider,
          providerPaymentId: charge.providerPaymentId,
          providerKey,
          paymentMethod: cart.paymentMethod,
          status: "succeeded",
          amount: cart.total,
          currency: cart.currency,
        },
      },
    },
    include: { items: true, payment: true },
  });
  return {
    status: 201,
    headers: { "Content-Type": "application/json", Location: orderLocation(order.id) },
    body: orderView(order),
  };
}

export async function recordDecline(tx: Transaction, { accountId, keyId, providerKey, cart, charge, provider }: ChargeRecord): Promise<StoredResponse> {
  if (charge.status !== "declined") throw new Error("recordDecline called for a successful charge");
  await tx.payment.create({
    data: {
      accountId,
      idempotencyKeyId: keyId,
      provider,
      providerPaymentId: charge.providerPaymentId,
      providerKey,
      paymentMethod: cart.paymentMethod,
      status: "declined",
      amount: cart.total,
      currency: cart.currency,
      declineCode: charge.declineCode,
    },
  });
  return {
    status: 402,
    headers: { "Content-Type": PROBLEM_CONTENT_TYPE },
    body: {
      type: problemType("payment-declined"),
      title: "Payment declined",
      status: 402,
      detail: `${charge.message} Nothing was charged. Try another payment method; that is a new checkout with a new key.`,
      declineCode: charge.declineCode,
      paymentId: charge.providerPaymentId,
    },
  };
}
