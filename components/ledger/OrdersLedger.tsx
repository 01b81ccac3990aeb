import Link from "next/link";
import type { ChargeCount, LedgerRow } from "@/lib/ledger/ledger-page";
import { LAB_STRATEGY_INFO, labStrategyOfSource } from "@/lib/lab/strategies";
import { formatMoney } from "@/components/ui/money";
import { AlertIcon, CheckIcon, KeyIcon } from "@/components/ui/icons";
import { formatInstant, keyPagePath } from "./format";

interface OrdersLedgerProps {
  rows: LedgerRow[];
  hasMore: boolean;
  limit: number;
  first: boolean;
}

/**
 * The ledger: this browser's orders, newest first, each with the
 * Idempotency-Key it was made under and the payment provider's own count of
 * charges for it. A checkout order must show 1; anything else is said loudly.
 */
export function OrdersLedger({ rows, hasMore, limit, first }: OrdersLedgerProps) {
  const wrong = rows.filter((row) => row.charges.kind === "counted" && row.charges.charges !== 1);
  const wrongCheckout = wrong.filter((row) => row.order.source === "checkout");
  const last = rows.at(-1);
  return (
    <>
      <Summary rows={rows} wrong={wrong.length} wrongCheckout={wrongCheckout.length} />
      {rows.length === 0 ? (
        <p className="mt-6 rounded-2xl border border-sand bg-white p-6 text-mocha">
          {first ? "No orders yet." : "No older orders."}
        </p>
      ) : (
        <ol className="mt-6 space-y-3" aria-label="Orders, newest first">
          {rows.map((row) => (
            <OrderRow key={row.order.id} row={row} />
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
  rows,
  wrong,
  wrongCheckout,
}: {
  rows: LedgerRow[];
  wrong: number;
  wrongCheckout: number;
}) {
  if (rows.length === 0) return null;
  if (wrongCheckout > 0) {
    return (
      <p
        role="alert"
        className="mt-6 flex gap-2 rounded-2xl bg-berry px-4 py-3 text-sm font-medium text-white"
        data-testid="ledger-summary"
        data-wrong={wrongCheckout}
      >
        <AlertIcon width={20} height={20} className="mt-px shrink-0" />
        {wrongCheckout}{" "}
        {wrongCheckout === 1 ? "order of the checkout was" : "orders of the checkout were"} not
        charged exactly once at the provider. This must never happen: it is a bug.
      </p>
    );
  }
  // Claim nothing of orders the provider was not asked about.
  const uncounted = rows.filter(
    (row) => row.charges.kind === "unavailable" || row.charges.kind === "limited",
  ).length;
  if (uncounted > 0) {
    return (
      <p
        className="mt-6 flex gap-2 rounded-2xl bg-honey/40 px-4 py-3 text-sm text-roast"
        data-testid="ledger-summary"
        data-wrong={0}
        data-uncounted={uncounted}
      >
        {uncounted} {uncounted === 1 ? "order on this page was" : "orders on this page were"} not
        counted at the payment provider this time; reload in a moment to count{" "}
        {uncounted === 1 ? "it" : "them"}.
      </p>
    );
  }
  return (
    <p
      className="mt-6 flex gap-2 rounded-2xl bg-sage-soft px-4 py-3 text-sm text-espresso"
      data-testid="ledger-summary"
      data-wrong={0}
    >
      <CheckIcon width={20} height={20} className="mt-px shrink-0 text-sage" />
      <span>
        Every checkout order on this page was charged exactly once, as the payment provider&apos;s
        own records show.
        {wrong > 0 &&
          ` ${wrong} ${wrong === 1 ? "order" : "orders"} from the strategy lab's broken strategies were not, which is what they are there to show.`}
      </span>
    </p>
  );
}

function OrderRow({ row }: { row: LedgerRow }) {
  const { order, storm } = row;
  const lab = labStrategyOfSource(order.source);
  return (
    <li
      className="rounded-2xl border border-sand bg-white p-4 sm:p-5"
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
      <div className="mt-3 grid gap-2 sm:grid-cols-[minmax(0,1fr)_auto] sm:items-center">
        <p className="min-w-0 text-xs text-mocha">
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
        <ChargeBadge charges={row.charges} />
      </div>
    </li>
  );
}

function ChargeBadge({ charges }: { charges: ChargeCount }) {
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
  const what = {
    key: "for this key",
    storm: "for this storm's one purchase",
    order: "for this order",
  }[charges.scope];
  const once = charges.charges === 1;
  return (
    <p
      className={`inline-flex items-center gap-1.5 justify-self-start rounded-full px-3 py-1 text-xs font-semibold sm:justify-self-end ${once ? "bg-sage-soft text-sage" : "bg-berry text-white"}`}
      data-testid="ledger-charges"
      data-charges={charges.charges}
    >
      {once ? <CheckIcon width={14} height={14} /> : <AlertIcon width={14} height={14} />}
      {once
        ? `1 charge at the provider ${what}`
        : `${charges.charges} charges at the provider ${what}: ${formatMoney(charges.amountCharged)} taken`}
    </p>
  );
}
