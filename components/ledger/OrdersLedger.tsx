import Link from "next/link";
import type { LedgerPurchase } from "@/lib/ledger/ledger-page";
import { isRefundDamage } from "@/lib/ledger/refund-check";
import { AlertIcon, CheckIcon } from "@/components/ui/icons";
import { PurchaseCard } from "./PurchaseCard";

interface OrdersLedgerProps {
  purchases: LedgerPurchase[];
  hasMore: boolean;
  limit: number;
  first: boolean;
}

/**
 * The ledger: this browser's orders, newest first, grouped by purchase, each
 * order with the Idempotency-Key it was made under and each purchase with
 * the payment provider's own count of its charges. A checkout purchase must
 * show 1; anything else is said loudly. So are refunds the provider and our
 * records disagree on.
 */
export function OrdersLedger({ purchases, hasMore, limit, first }: OrdersLedgerProps) {
  const wrong = purchases.filter(
    (purchase) =>
      purchase.verdict === "charged-more-than-once" || purchase.verdict === "not-charged",
  );
  const wrongCheckout = wrong.filter((purchase) => purchase.checkout);
  const last = purchases.at(-1)?.rows.at(-1);
  const refundDamage = purchases
    .flatMap((purchase) => purchase.rows)
    .filter((row) => row.refunds && isRefundDamage(row.refunds.verdict)).length;
  return (
    <>
      {refundDamage > 0 && (
        <p
          role="alert"
          className="mt-6 flex gap-2 rounded-2xl bg-berry px-4 py-3 text-sm font-medium text-white"
          data-testid="ledger-refund-summary"
          data-wrong={refundDamage}
        >
          <AlertIcon width={20} height={20} className="mt-px shrink-0" />
          {refundDamage === 1
            ? "1 order's refunds disagree"
            : `${refundDamage} orders' refunds disagree`}{" "}
          with the payment provider&apos;s records, or exceed what was charged: see{" "}
          {refundDamage === 1 ? "it" : "them"} below, marked in red.
        </p>
      )}
      <Summary purchases={purchases} wrong={wrong.length} wrongCheckout={wrongCheckout.length} />
      {purchases.length === 0 ? (
        <p className="mt-6 rounded-2xl border border-sand bg-white p-6 text-mocha">
          {first ? "No orders yet." : "No older orders."}
        </p>
      ) : (
        <ol className="mt-6 space-y-3" aria-label="Purchases, newest first">
          {purchases.map((purchase) => (
            <PurchaseCard key={purchase.cartId} purchase={purchase} />
          ))}
        </ol>
      )}
      <nav
        aria-label="Pages of orders"
        className="mt-6 flex flex-wrap justify-between gap-3 text-sm font-semibold"
      >
        {!first ? (
          <Link
            href="/orders"
            className="rounded-full px-4 py-2 text-espresso ring-1 ring-sand hover:bg-oat"
          >
            ← Newest orders
          </Link>
        ) : (
          <span />
        )}
        {hasMore && last && (
          <Link
            href={`/orders?${new URLSearchParams({ limit: String(limit), starting_after: last.order.id })}`}
            className="rounded-full bg-roast px-4 py-2 text-cream hover:bg-espresso"
            data-testid="older-orders"
          >
            Older orders →
          </Link>
        )}
      </nav>
    </>
  );
}

function Summary({
  purchases,
  wrong,
  wrongCheckout,
}: {
  purchases: LedgerPurchase[];
  wrong: number;
  wrongCheckout: number;
}) {
  if (purchases.length === 0) return null;
  if (wrongCheckout > 0) {
    return (
      <p
        role="alert"
        className="mt-6 flex gap-2 rounded-2xl bg-berry px-4 py-3 text-sm font-medium text-white"
        data-testid="ledger-summary"
        data-wrong={wrongCheckout}
        data-broken={wrong}
      >
        <AlertIcon width={20} height={20} className="mt-px shrink-0" />
        {wrongCheckout}{" "}
        {wrongCheckout === 1 ? "purchase of the checkout was" : "purchases of the checkout were"}{" "}
        not charged exactly once at the provider. This must never happen: it is a bug.
      </p>
    );
  }
  // Claim nothing of purchases the provider was not asked about.
  const uncounted = purchases.filter(
    (purchase) => purchase.charges.kind === "unavailable" || purchase.charges.kind === "limited",
  ).length;
  if (wrong > 0) {
    // The demos of what breaks without a key did their damage: say it first, and whose it is.
    return (
      <p
        className="mt-6 flex gap-2 rounded-2xl border border-berry/40 bg-berry-soft px-4 py-3 text-sm text-espresso"
        data-testid="ledger-summary"
        data-wrong={0}
        data-broken={wrong}
      >
        <AlertIcon width={20} height={20} className="mt-px shrink-0 text-berry" />
        <span>
          <strong className="font-semibold text-berry">
            {wrong} {wrong === 1 ? "purchase was" : "purchases were"} not charged exactly once.
          </strong>{" "}
          {wrong === 1 ? "It was" : "They were"} paid through a strategy that is broken on purpose
          (the No-key demo or the strategy lab), to show the damage.
          {uncounted === 0 &&
            " Every purchase of the real checkout on this page was charged exactly once."}
        </span>
      </p>
    );
  }
  if (uncounted > 0) {
    return (
      <p
        className="mt-6 flex gap-2 rounded-2xl bg-honey/40 px-4 py-3 text-sm text-roast"
        data-testid="ledger-summary"
        data-wrong={0}
        data-broken={0}
        data-uncounted={uncounted}
      >
        {uncounted} {uncounted === 1 ? "purchase on this page was" : "purchases on this page were"}{" "}
        not counted at the payment provider this time; reload in a moment to count{" "}
        {uncounted === 1 ? "it" : "them"}.
      </p>
    );
  }
  return (
    <p
      className="mt-6 flex gap-2 rounded-2xl bg-sage-soft px-4 py-3 text-sm text-espresso"
      data-testid="ledger-summary"
      data-wrong={0}
      data-broken={0}
    >
      <CheckIcon width={20} height={20} className="mt-px shrink-0 text-sage" />
      <span>
        Every purchase on this page was charged exactly once, as the payment provider&apos;s own
        records show.
      </span>
    </p>
  );
}
