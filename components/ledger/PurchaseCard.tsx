import Link from "next/link";
import type { LedgerPurchase, LedgerRow } from "@/lib/ledger/ledger-page";
import { damageHeadline } from "@/lib/ledger/purchase";
import { LAB_STRATEGY_INFO, labStrategyOfSource } from "@/lib/lab/strategies";
import { formatMoney } from "@/components/ui/money";
import { AlertIcon, CheckIcon, KeyIcon } from "@/components/ui/icons";
import { formatInstant, keyPagePath } from "./format";
import { OrderFulfilment } from "./OrderFulfilment";
import { OrderRefunds } from "./OrderRefunds";

/**
 * One purchase (one cart paid for) in the ledger: its orders, and what the
 * provider charged for all of them together. A purchase charged more than
 * once leads with the damage, in the error style, before any order.
 */
export function PurchaseCard({ purchase }: { purchase: LedgerPurchase }) {
  const headline = damageHeadline(
    {
      cartId: purchase.cartId,
      orders: purchase.orders,
      charges: purchase.charges,
      verdict: purchase.verdict,
    },
    formatMoney,
  );
  const damaged = headline !== null;
  const shownElsewhere = purchase.orders - purchase.rows.length;
  return (
    <li
      className={`overflow-hidden rounded-2xl border bg-white ${damaged ? "border-berry" : "border-sand"}`}
      data-testid="ledger-purchase"
      data-cart-id={purchase.cartId}
      data-verdict={purchase.verdict}
      data-orders={purchase.orders}
    >
      {damaged && (
        <p
          className="flex items-start gap-2 bg-berry px-4 py-2.5 text-sm font-semibold text-white sm:px-5"
          data-testid="ledger-damage"
        >
          <AlertIcon width={18} height={18} className="mt-px shrink-0" />
          <span>
            {headline}
            <span className="font-normal">
              {" "}
              for one purchase (cart{" "}
              <span className="break-all font-mono text-xs">{purchase.cartId}</span>)
            </span>
          </span>
        </p>
      )}
      <ol
        className="divide-y divide-sand"
        aria-label={purchase.rows.length === 1 ? "Its order" : "Its orders, newest first"}
      >
        {purchase.rows.map((row) => (
          <OrderRow key={row.order.id} row={row} />
        ))}
      </ol>
      <div className="flex flex-wrap items-center justify-between gap-2 border-t border-sand bg-cream/60 px-4 py-2.5 sm:px-5">
        <p className="text-xs text-mocha">
          {purchase.orders === 1 ? "1 order" : `${purchase.orders} orders`} for this purchase
          {shownElsewhere > 0 && ` (${shownElsewhere} on another page)`}
        </p>
        <ChargeBadge purchase={purchase} />
      </div>
    </li>
  );
}

function OrderRow({ row }: { row: LedgerRow }) {
  const { order, storm, refunds, fulfilment } = row;
  const lab = labStrategyOfSource(order.source);
  return (
    <li
      className="p-4 sm:p-5"
      data-testid="ledger-row"
      data-order-id={order.id}
      data-source={order.source}
    >
      <div className="flex flex-wrap items-baseline justify-between gap-x-4 gap-y-1">
        <p className="min-w-0 font-mono text-xs text-mocha">
          Order{" "}
          <span className="break-all text-espresso" data-testid="ledger-order-id">
            {order.id}
          </span>
        </p>
        <p className="text-lg font-semibold tabular-nums text-espresso" data-testid="ledger-amount">
          {formatMoney(order.amount, order.currency)}
        </p>
      </div>
      <p className="mt-1 text-sm text-espresso">
        {order.items.map((item) => `${item.quantity} × ${item.name}`).join(", ")}
        <span className="text-mocha"> · </span>
        <time dateTime={order.createdAt} className="text-mocha">
          {formatInstant(order.createdAt)}
        </time>
      </p>
      {lab && (
        <p
          className="mt-2 inline-flex rounded-full bg-berry-soft px-2.5 py-0.5 text-xs font-semibold text-berry"
          data-testid="ledger-lab"
        >
          Strategy lab: {LAB_STRATEGY_INFO[lab].name} (broken on purpose)
          {storm && `, a storm of ${storm.size}`}
        </p>
      )}
      <p className="mt-2 min-w-0 text-xs text-mocha">
        <span className="inline-flex items-center gap-1 font-medium">
          <KeyIcon width={14} height={14} /> Idempotency-Key
        </span>{" "}
        {order.idempotencyKey === null ? (
          // A checkout order always had a key; one paid before orders kept it, and whose key row has since been reaped, no longer says which.
          lab ? (
            <span className="font-medium text-berry">none sent</span>
          ) : (
            <span>not kept (an order older than the ledger)</span>
          )
        ) : lab ? (
          <code className="break-all font-mono text-espresso" data-testid="ledger-key">
            {order.idempotencyKey}
          </code>
        ) : (
          <Link
            href={keyPagePath(order.idempotencyKey)}
            className="break-all font-mono text-clay underline underline-offset-2 hover:text-espresso"
            data-testid="ledger-key"
          >
            {order.idempotencyKey}
          </Link>
        )}
      </p>
      <OrderFulfilment status={order.status} fulfilment={fulfilment} />
      {refunds && (
        <OrderRefunds orderId={order.id} check={refunds} refundable={order.source === "checkout"} />
      )}
    </li>
  );
}

function ChargeBadge({ purchase }: { purchase: LedgerPurchase }) {
  const { charges } = purchase;
  if (charges.kind === "unavailable") {
    return (
      <p
        className="rounded-full bg-honey/40 px-3 py-1 text-xs font-semibold text-roast"
        data-testid="ledger-charges"
        data-charges=""
      >
        Provider unreachable: not counted
      </p>
    );
  }
  if (charges.kind === "limited") {
    return (
      <p
        className="rounded-full bg-honey/40 px-3 py-1 text-xs font-semibold text-roast"
        data-testid="ledger-charges"
        data-charges=""
      >
        Not counted: too many lookups, reload in {charges.retryAfterSeconds} s
      </p>
    );
  }
  if (charges.kind === "untracked") {
    return (
      <p
        className="rounded-full bg-oat px-3 py-1 text-xs font-semibold text-mocha"
        data-testid="ledger-charges"
        data-charges=""
      >
        Paid before charges were tracked
      </p>
    );
  }
  const once = purchase.verdict === "charged-once";
  return (
    <p
      className={`inline-flex items-center gap-1.5 rounded-full px-3 py-1 text-xs font-semibold ${once ? "bg-sage-soft text-sage" : "bg-berry text-white"}`}
      data-testid="ledger-charges"
      data-charges={charges.charges}
      data-verdict={purchase.verdict}
    >
      {once ? <CheckIcon width={14} height={14} /> : <AlertIcon width={14} height={14} />}
      {once
        ? "1 charge at the provider"
        : `${charges.charges} ${charges.charges === 1 ? "charge" : "charges"} at the provider: ${formatMoney(charges.amountCharged, charges.currency)} taken`}
    </p>
  );
}
