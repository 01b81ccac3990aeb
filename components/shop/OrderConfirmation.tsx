"use client";

import Link from "next/link";
import { useEffect, useRef, type ReactNode, type RefObject } from "react";
import { PAYMENT_METHODS, THREE_D_SECURE_CARD, type Order } from "@/lib/client/api-types";
import { paidOutcome } from "@/lib/client/purchase";
import { keyPagePath } from "@/components/ledger/format";
import { formatMoney } from "@/components/ui/money";
import { focusOutcome } from "@/components/ui/focus";
import { AlertIcon, CheckIcon, RepeatIcon, Spinner } from "@/components/ui/icons";
import { ProviderEvents } from "./ProviderEvents";
import { PURCHASE_DAMAGE_HEADING_ID, PurchaseDamage } from "./PurchaseDamage";
import { usePurchase } from "./usePurchase";

interface OrderConfirmationProps {
  order: Order;
  replayed: boolean;
  /** Null only when the lab's broken strategy paid without a key. */
  idempotencyKey: string | null;
  attempts: number;
  /** The "Duplicate webhooks" demo ran: have the provider deliver the order's events again. */
  redeliverWebhooks: boolean;
  onNewOrder: () => void;
}

/**
 * The answer to a paid cart. What it says of the purchase comes from the
 * records (GET /api/purchases/{cartId}): a purchase charged more than once
 * leads with the damage and shows no success. A payment sent without a key
 * shows nothing until the records are counted; the checkout's, protected by
 * its key, is confirmed at once and the count follows.
 */
/** Each outcome's heading, which names the box and takes the focus. */
const HEADING_IDS = {
  confirmed: "order-confirmed-heading",
  damaged: PURCHASE_DAMAGE_HEADING_ID,
  counting: "purchase-counting-heading",
  uncounted: "purchase-counting-heading",
} as const;

export function OrderConfirmation({
  order,
  replayed,
  idempotencyKey,
  attempts,
  redeliverWebhooks,
  onNewOrder,
}: OrderConfirmationProps) {
  const headingRef = useRef<HTMLHeadingElement>(null);
  const counted = usePurchase(order.cartId);
  const summary = counted?.ok ? counted.summary : null;
  const outcome = paidOutcome(idempotencyKey !== null, counted);

  // Move focus to the result, so keyboard and screen reader users land on it (again when the count changes what it is).
  useEffect(() => {
    if (headingRef.current) focusOutcome(headingRef.current);
  }, [outcome]);

  const { payment } = order;
  const paidWith =
    payment &&
    (PAYMENT_METHODS.find((method) => method.id === payment.paymentMethod)?.label ??
      payment.paymentMethod);

  return (
    <section
      data-testid="order-confirmation"
      data-outcome={outcome}
      aria-labelledby={HEADING_IDS[outcome]}
    >
      {outcome === "damaged" && counted?.ok ? (
        <PurchaseDamage
          purchase={counted.purchase}
          summary={counted.summary}
          headingRef={headingRef}
        />
      ) : outcome === "confirmed" ? (
        <OutcomeHeading
          id={HEADING_IDS[outcome]}
          headingRef={headingRef}
          icon={<CheckIcon width={22} height={22} strokeWidth={2.5} />}
          iconClassName="bg-sage text-white"
          title="Order confirmed"
          detail="Thank you! Your coffee gear is on its way (in spirit)."
        />
      ) : (
        <OutcomeHeading
          id={HEADING_IDS[outcome]}
          headingRef={headingRef}
          testId="purchase-counting"
          icon={
            outcome === "counting" ? (
              <Spinner width={22} height={22} />
            ) : (
              <AlertIcon width={22} height={22} />
            )
          }
          iconClassName="bg-honey/40 text-roast"
          title={outcome === "counting" ? "Counting the charges…" : "Paid, charges not counted"}
          detail={
            outcome === "counting"
              ? "Sent without an Idempotency-Key: asking the payment provider how often it charged this purchase."
              : counted && !counted.ok
                ? counted.reason
                : "The payment provider could not be asked about this purchase."
          }
        />
      )}

      {/*
        The next steps sit right under the heading, high above where Pay was:
        a double-click's second click, however late, lands on the details
        below, never on "Start a new order".
      */}
      <div className="mt-4 flex flex-wrap items-center gap-x-4 gap-y-2 text-sm font-semibold">
        <Link
          href="/orders"
          className="text-clay underline underline-offset-2 hover:text-espresso"
          data-testid="see-orders"
        >
          {outcome === "damaged" ? "See the purchase in your orders" : "See it in your orders"}
        </Link>
        {idempotencyKey && (
          <Link
            href={keyPagePath(idempotencyKey)}
            className="text-clay underline underline-offset-2 hover:text-espresso"
          >
            Inspect its key
          </Link>
        )}
        <button
          type="button"
          onClick={onNewOrder}
          className="rounded-xl border border-roast bg-white px-4 py-2 text-roast transition-colors hover:bg-oat"
        >
          Start a new order
        </button>
      </div>

      {outcome !== "damaged" && (
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
          {summary && summary.verdict === "charged-once" && (
            <>
              <dt className="text-mocha">At the provider</dt>
              <dd className="text-espresso" data-testid="order-provider-charges">
                Charged once, as its own records show
              </dd>
            </>
          )}
        </dl>
      )}

      {/* Settled by the provider's event, not by the checkout's answer: show the deliveries. */}
      {payment?.paymentMethod === THREE_D_SECURE_CARD && outcome !== "damaged" && (
        <ProviderEvents orderId={order.id} redeliver={redeliverWebhooks} />
      )}

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

      {replayed && outcome === "confirmed" && (
        <p
          className="mt-4 flex gap-2 rounded-xl bg-sage-soft p-3 text-sm text-espresso"
          data-testid="order-replayed"
        >
          <RepeatIcon width={18} height={18} className="mt-0.5 shrink-0 text-sage" />
          <span>
            <strong className="font-semibold text-sage">Charged once, not again.</strong> Your
            payment had already gone through, so the server returned the stored order (
            <code className="font-mono text-xs">Idempotent-Replayed: true</code>) and nothing was
            charged a second time.
          </span>
        </p>
      )}
    </section>
  );
}

interface OutcomeHeadingProps {
  id: string;
  headingRef: RefObject<HTMLHeadingElement | null>;
  icon: ReactNode;
  iconClassName: string;
  title: string;
  detail: string;
  testId?: string;
}

/** The box's heading, which names it and takes the focus, with its icon and one sentence. */
function OutcomeHeading({
  id,
  headingRef,
  icon,
  iconClassName,
  title,
  detail,
  testId,
}: OutcomeHeadingProps) {
  return (
    <div className="flex items-start gap-3" data-testid={testId}>
      <span className={`grid size-11 shrink-0 place-items-center rounded-full ${iconClassName}`}>
        {icon}
      </span>
      <div>
        <h2
          id={id}
          ref={headingRef}
          tabIndex={-1}
          className="font-display text-2xl font-semibold text-espresso"
        >
          {title}
        </h2>
        <p className="text-sm text-mocha">{detail}</p>
      </div>
    </div>
  );
}
