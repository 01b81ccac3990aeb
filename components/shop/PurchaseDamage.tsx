import type { RefObject } from "react";
import type { Purchase } from "@/lib/client/purchase";
import type { PurchaseSummary } from "@/lib/ledger/purchase";
import { damageHeadline } from "@/lib/ledger/purchase";
import { formatMoney } from "@/components/ui/money";
import { AlertIcon } from "@/components/ui/icons";

export const PURCHASE_DAMAGE_HEADING_ID = "purchase-damage-heading";

/**
 * A purchase the records say went wrong (more than one charge, or an order
 * with none), said first and in the error style: what was taken, for how
 * many orders, against what one purchase costs. No success anywhere near it.
 */
export function PurchaseDamage({
  purchase,
  summary,
  headingRef,
}: {
  purchase: Purchase;
  summary: PurchaseSummary;
  headingRef: RefObject<HTMLHeadingElement | null>;
}) {
  const headline = damageHeadline(summary, formatMoney);
  const keyless = purchase.orders.every((order) => order.idempotencyKey === null);
  const price = purchase.orders[0];
  return (
    <>
      <div
        role="alert"
        className="rounded-xl bg-berry p-4 text-white"
        data-testid="purchase-damage"
        data-verdict={summary.verdict}
      >
        <div className="flex items-start gap-3">
          <AlertIcon width={24} height={24} strokeWidth={2.25} className="mt-0.5 shrink-0" />
          <h2
            id={PURCHASE_DAMAGE_HEADING_ID}
            ref={headingRef}
            tabIndex={-1}
            className="font-display text-2xl font-semibold leading-tight"
            data-testid="purchase-damage-headline"
          >
            {headline}
          </h2>
        </div>
        <p className="mt-2 text-sm leading-relaxed">
          {keyless
            ? "One purchase, paid without an Idempotency-Key: the retry after the lost answer could not be told from a new purchase, so the server wrote another order and the provider took the money again. This is the bug the key prevents."
            : "One purchase was not charged exactly once at the payment provider. This must never happen: it is a bug."}
        </p>
      </div>

      <dl className="mt-4 grid grid-cols-[auto_minmax(0,1fr)] gap-x-4 gap-y-2 rounded-xl bg-berry-soft p-4 text-sm">
        {price && (
          <>
            <dt className="text-mocha">One purchase costs</dt>
            <dd className="font-semibold tabular-nums text-espresso">
              {formatMoney(price.amount, price.currency)}
            </dd>
          </>
        )}
        {summary.charges.kind === "counted" && (
          <>
            <dt className="text-mocha">Taken at the provider</dt>
            <dd className="font-semibold tabular-nums text-berry" data-testid="purchase-charged">
              {formatMoney(summary.charges.amountCharged, summary.charges.currency)} in{" "}
              {summary.charges.charges} {summary.charges.charges === 1 ? "charge" : "charges"}
            </dd>
          </>
        )}
        <dt className="text-mocha">Orders</dt>
        <dd className="min-w-0 text-espresso">
          <ul aria-label="Orders of this purchase">
            {purchase.orders.map((order) => (
              <li
                key={order.id}
                className="break-all font-mono text-xs"
                data-testid="purchase-order"
                data-order-id={order.id}
              >
                {order.id}
              </li>
            ))}
          </ul>
        </dd>
      </dl>
    </>
  );
}
