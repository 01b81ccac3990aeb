import type { IdempotentEndpoint } from "@/lib/idempotency/idempotent-endpoint";
import type { Transaction } from "@/lib/idempotency/postgres-store";
import type { IdempotencyStore } from "@/lib/idempotency/store";
import type { StoredResponse } from "@/lib/idempotency/stored-response";
import { problemType, PROBLEM_CONTENT_TYPE } from "@/lib/http/problem";
import { parseCheckoutRequest, type PricedCart } from "@/lib/orders/cart";
import { orderLocation, orderView } from "@/lib/orders/order-view";
import type { ChargeResult, PaymentProvider } from "@/lib/payments/provider";
import { failIfRequested, type FaultPoint } from "@/lib/faults";

/**
 * POST /api/orders: price the cart, charge it, and record the outcome. The
 * idempotency layer around it guarantees this runs to completion at most once
 * per (account, key); this module only says what one checkout does.
 */
export function checkoutEndpoint(deps: {
  store: IdempotencyStore<Transaction>;
  provider: PaymentProvider;
  /** A failure this request asked for (tests and demos only). */
  fault?: FaultPoint;
}): IdempotentEndpoint<PricedCart, Transaction> {
  return {
    store: deps.store,
    parseBody: parseCheckoutRequest,
    async perform({ accountId, idempotencyKey, body: cart, claim, beginSideEffect, complete }) {
      failIfRequested(deps.fault, "before-charge");
      await beginSideEffect();
      const charge = await deps.provider.charge({
        amount: cart.total,
        currency: cart.currency,
        paymentMethod: cart.paymentMethod,
        // Scoped by account: two shoppers may pick the same key, but they
        // must never share a charge at the provider.
        idempotencyKey: `${accountId}:${idempotencyKey}`,
      });
      failIfRequested(deps.fault, "after-charge");
      const record = { accountId, keyId: claim.keyId, cart, charge, provider: deps.provider.name };
      return complete((tx) => (charge.status === "succeeded" ? recordPaidOrder(tx, record) : recordDecline(tx, record)));
    },
  };
}

interface ChargeRecord {
  accountId: string;
  keyId: string;
  cart: PricedCart;
  charge: ChargeResult;
  provider: string;
}

async function recordPaidOrder(tx: Transaction, { accountId, keyId, cart, charge, provider }: ChargeRecord): Promise<StoredResponse> {
  const order = await tx.order.create({
    data: {
      accountId,
      idempotencyKeyId: keyId,
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

async function recordDecline(tx: Transaction, { accountId, keyId, cart, charge, provider }: ChargeRecord): Promise<StoredResponse> {
  if (charge.status !== "declined") throw new Error("recordDecline called for a successful charge");
  await tx.payment.create({
    data: {
      accountId,
      idempotencyKeyId: keyId,
      provider,
      providerPaymentId: charge.providerPaymentId,
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
