"use client";

import Link from "next/link";
import { useEffect, useRef } from "react";
import { PAYMENT_METHODS, type Order } from "@/lib/client/api-types";
import { keyPagePath } from "@/components/ledger/format";
import { formatMoney } from "@/components/ui/money";
import { focusOutcome } from "@/components/ui/focus";
import { AlertIcon, CheckIcon, RepeatIcon } from "@/components/ui/icons";

interface OrderConfirmationProps {
  order: Order;
  replayed: boolean;
  /** Null only when the lab's broken strategy paid without a key. */
  idempotencyKey: string | null;
  attempts: number;
  onNewOrder: () => void;
}

export function OrderConfirmation({
  order,
  replayed,
  idempotencyKey,
  attempts,
  onNewOrder,
}: OrderConfirmationProps) {
  const headingRef = useRef<HTMLHeadingElement>(null);

  // Move focus to the result, so keyboard and screen reader users land on it.
  useEffect(() => {
    if (headingRef.current) focusOutcome(headingRef.current);
  }, []);

  const { payment } = order;
  const paidWith =
    payment &&
    (PAYMENT_METHODS.find((method) => method.id === payment.paymentMethod)?.label ??
      payment.paymentMethod);

  return (
    <section data-testid="order-confirmation" aria-labelledby="order-confirmed-heading">
      <div className="flex items-start gap-3">
        <span className="grid size-11 shrink-0 place-items-center rounded-full bg-sage text-white">
          <CheckIcon width={22} height={22} strokeWidth={2.5} />
        </span>
        <div>
          <h2
            id="order-confirmed-heading"
            ref={headingRef}
            tabIndex={-1}
            className="font-display text-2xl font-semibold text-espresso"
          >
            Order confirmed
          </h2>
          <p className="text-sm text-mocha">
            Thank you! Your coffee gear is on its way (in spirit).
          </p>
        </div>
      </div>

      <dl className="mt-5 grid grid-cols-[auto_minmax(0,1fr)] gap-x-4 gap-y-2 rounded-xl bg-cream p-4 text-sm">
        <dt className="text-mocha">Order</dt>
        <dd className="break-all font-mono text-espresso" data-testid="order-id">
          {order.id}
        </dd>
        <dt className="text-mocha">Amount charged</dt>
        <dd className="font-semibold tabular-nums text-espresso" data-testid="order-amount">
          {formatMoney(order.amount, order.currency)}
        </dd>
        {/* The API allows an order without its payment row; then there is no method to name. */}
        {paidWith && (
          <>
            <dt className="text-mocha">Paid with</dt>
            <dd className="text-espresso">{paidWith}</dd>
          </>
        )}
        <dt className="text-mocha">Requests</dt>
        <dd className="text-espresso" data-testid="order-attempts">
          {attempts === 1
            ? "1 request"
            : idempotencyKey === null
              ? `${attempts} requests, no key`
              : `${attempts} requests, charged once`}
        </dd>
      </dl>

      <ul className="mt-4 divide-y divide-sand text-sm" aria-label="Items in this order">
        {order.items.map((item) => (
          <li key={item.sku} className="flex justify-between gap-3 py-2">
            <span className="text-espresso">
              {item.name} <span className="text-mocha">× {item.quantity}</span>
            </span>
            <span className="tabular-nums text-espresso">
              {formatMoney(item.amount, order.currency)}
            </span>
          </li>
        ))}
      </ul>

      {replayed && (
        <p
          className="mt-4 flex gap-2 rounded-xl bg-clay-soft p-3 text-sm text-espresso"
          data-testid="order-replayed"
        >
          <RepeatIcon width={18} height={18} className="mt-0.5 shrink-0 text-clay" />
          <span>
            <strong className="font-semibold">Replayed result.</strong> The server had already
            completed this order, so it returned the first response (
            <code className="font-mono text-xs">Idempotent-Replayed: true</code>) instead of
            charging you again.
          </span>
        </p>
      )}

      {/* The key itself is in the attempts timeline below; here only its absence needs saying. */}
      {idempotencyKey === null && (
        <p
          className="mt-4 flex gap-2 rounded-xl bg-berry-soft p-3 text-sm text-espresso"
          data-testid="duplicate-warning"
        >
          <AlertIcon width={18} height={18} className="mt-0.5 shrink-0 text-berry" />
          <span>
            <strong className="font-semibold text-berry">Charged more than once.</strong> This
            payment was sent without an Idempotency-Key, so the server could not tell the retry from
            a new purchase. The attempt whose answer was lost was charged too: this is the bug the
            key prevents.
          </span>
        </p>
      )}

      <p className="mt-4 flex flex-wrap gap-x-4 gap-y-1 text-sm font-semibold">
        <Link
          href="/orders"
          className="text-clay underline underline-offset-2 hover:text-espresso"
          data-testid="see-orders"
        >
          See it in your orders
        </Link>
        {idempotencyKey && (
          <Link
            href={keyPagePath(idempotencyKey)}
            className="text-clay underline underline-offset-2 hover:text-espresso"
          >
            Inspect its key
          </Link>
        )}
      </p>

      <button
        type="button"
        onClick={onNewOrder}
        className="mt-5 w-full rounded-xl border border-roast bg-white px-5 py-3 text-base font-semibold text-roast transition-colors hover:bg-oat"
      >
        Start a new order
      </button>
    </section>
  );
}
