import Link from "next/link";
import {
  isRefundDamage,
  type HeldRefundMatch,
  type OrderRefundCheck,
  type RecordedRefund,
} from "@/lib/ledger/refund-check";
import { formatMoney } from "@/components/ui/money";
import { AlertIcon, CheckIcon } from "@/components/ui/icons";
import { formatInstant, keyPagePath } from "./format";
import { RefundControl } from "./RefundControl";

interface OrderRefundsProps {
  orderId: string;
  check: OrderRefundCheck;
  /** An order of the real checkout: it gets a Refund control (the lab's broken orders do not). */
  refundable: boolean;
}

/**
 * A paid order's refunds: what is refunded and what is left, our refund
 * rows, and the payment provider's refunds of its PaymentIntent checked
 * against them (lib/ledger/refund-check.ts). Refunds the two sides disagree
 * on lead, in the error style, as a purchase charged twice does.
 */
export function OrderRefunds({ orderId, check, refundable }: OrderRefundsProps) {
  const money = (minorUnits: number) => formatMoney(minorUnits, check.currency);
  const damage = damageLine(check, money);
  const left = check.charged - check.reserved;
  const shown = check.recorded.length > 0 || check.verdict !== "none" || refundable;
  if (!shown) return null;
  const unrecorded =
    check.provider.kind === "read"
      ? check.provider.refunds.filter((refund) => refund.match !== "recorded")
      : [];
  return (
    <section
      aria-label="Refunds"
      className="mt-3 border-t border-dashed border-sand pt-3"
      data-testid="order-refunds"
      data-verdict={check.verdict}
      data-reserved={check.reserved}
      data-left={left}
    >
      {damage && (
        <p
          className="mb-3 flex items-start gap-2 rounded-xl bg-berry px-3 py-2 text-sm font-semibold text-white"
          data-testid="refund-damage"
        >
          <AlertIcon width={18} height={18} className="mt-px shrink-0" />
          <span>{damage}</span>
        </p>
      )}
      <div className="flex flex-wrap items-center justify-between gap-x-4 gap-y-2">
        <p className="text-sm text-espresso" data-testid="refund-balance">
          {check.reserved === 0 ? (
            <span className="text-mocha">Not refunded</span>
          ) : left <= 0 ? (
            <span className="inline-flex items-center rounded-full bg-oat px-2.5 py-0.5 text-xs font-semibold text-espresso">
              Refunded in full: {money(check.charged)}
            </span>
          ) : (
            <>
              Refunded{" "}
              <strong className="font-semibold tabular-nums">{money(check.reserved)}</strong> of{" "}
              <span className="tabular-nums">{money(check.charged)}</span>
              <span className="text-mocha"> · </span>
              <span className="tabular-nums">{money(left)}</span> left
            </>
          )}
        </p>
        <ProviderBadge check={check} money={money} />
      </div>

      {check.recorded.length > 0 && (
        <ol className="mt-2 space-y-1" aria-label="Its refunds, oldest first">
          {check.recorded.map((row) => (
            <RefundRow key={row.id} row={row} money={money} />
          ))}
        </ol>
      )}

      {unrecorded.length > 0 && (
        <div
          className="mt-2 rounded-xl bg-berry-soft px-3 py-2"
          data-testid="provider-only-refunds"
        >
          <p className="text-xs font-semibold text-berry">
            At the payment provider, not as we record it:
          </p>
          <ul className="mt-1 space-y-0.5 text-xs text-espresso">
            {unrecorded.map((refund) => (
              <li key={refund.id} data-testid="provider-refund" data-match={refund.match}>
                <span className="font-semibold tabular-nums">{money(refund.amount)}</span>{" "}
                {refund.status}, {formatInstant(refund.createdAt)},{" "}
                <code className="break-all font-mono">{refund.id}</code>:{" "}
                {MATCH_WORDS[refund.match]}
              </li>
            ))}
          </ul>
        </div>
      )}

      {refundable && (
        <div className="mt-3">
          <RefundControl
            orderId={orderId}
            charged={check.charged}
            reserved={check.reserved}
            currency={check.currency}
          />
        </div>
      )}
    </section>
  );
}

const MATCH_WORDS: Record<HeldRefundMatch, string> = {
  recorded: "recorded",
  differs: "our record of it says another amount",
  "in-flight": "ours is still being recorded",
  unrecorded: "we have no record of it",
  "no-money-moved": "it moved no money",
};

const STATUS_STYLE: Record<RecordedRefund["status"], string> = {
  succeeded: "bg-sage-soft text-sage",
  pending: "bg-honey/40 text-roast",
  refused: "bg-oat text-mocha",
};

function RefundRow({ row, money }: { row: RecordedRefund; money: (m: number) => string }) {
  return (
    <li
      className="flex flex-wrap items-baseline gap-x-2 gap-y-0.5 text-xs text-mocha"
      data-testid="refund-row"
      data-status={row.status}
      data-amount={row.amount}
      data-provider-refund-id={row.providerRefundId ?? ""}
    >
      <span className="text-sm font-semibold tabular-nums text-espresso">{money(row.amount)}</span>
      <span className={`rounded-full px-2 py-px font-semibold ${STATUS_STYLE[row.status]}`}>
        {row.status === "pending" ? "in progress" : row.status}
        {row.refusalCode && ` (${row.refusalCode})`}
      </span>
      <time dateTime={row.createdAt}>{formatInstant(row.createdAt)}</time>
      {row.providerRefundId && (
        <code className="break-all font-mono text-espresso">{row.providerRefundId}</code>
      )}
      <Link
        href={keyPagePath(row.idempotencyKey)}
        className="font-medium text-clay underline underline-offset-2 hover:text-espresso"
        data-testid="refund-row-key"
      >
        its key
      </Link>
    </li>
  );
}

/** The provider's side in one badge: loud when it disagrees with ours. */
function ProviderBadge({
  check,
  money,
}: {
  check: OrderRefundCheck;
  money: (minorUnits: number) => string;
}) {
  const { provider, verdict } = check;
  const pill = "inline-flex items-center gap-1.5 rounded-full px-3 py-1 text-xs font-semibold";
  if (provider.kind !== "read") {
    // Nothing of ours to check either: the charge badge already says the provider was not asked.
    if (check.recorded.length === 0) return null;
    return (
      <p className={`${pill} bg-honey/40 text-roast`} data-testid="refund-check">
        {provider.kind === "limited"
          ? `Refunds not checked: too many lookups, reload in ${provider.retryAfterSeconds} s`
          : "Provider unreachable: refunds not checked"}
      </p>
    );
  }
  const { totals } = provider;
  const held = `${totals.refunds} ${totals.refunds === 1 ? "refund" : "refunds"}`;
  if (verdict === "none") return null;
  if (isRefundDamage(verdict))
    return (
      <p className={`${pill} bg-berry text-white`} data-testid="refund-check">
        <AlertIcon width={14} height={14} />
        {held} at the provider: {money(totals.amount)}
      </p>
    );
  if (verdict === "in-flight")
    return (
      <p className={`${pill} bg-honey/40 text-roast`} data-testid="refund-check">
        A refund is in progress: {held} at the provider so far
      </p>
    );
  return (
    <p className={`${pill} bg-sage-soft text-sage`} data-testid="refund-check">
      <CheckIcon width={14} height={14} />
      The provider holds the same {held}: {money(totals.amount)}
    </p>
  );
}

/** The damage in one line, or null: refunds the provider and our records disagree on, or more than was charged. */
function damageLine(check: OrderRefundCheck, money: (minorUnits: number) => string): string | null {
  if (!isRefundDamage(check.verdict)) return null;
  const { recordedTotals: ours } = check;
  const count = (n: number) => `${n} ${n === 1 ? "refund" : "refunds"}`;
  if (check.provider.kind !== "read")
    return `Refunded more than was charged: ${money(ours.amount)} of ${money(check.charged)} in our records`;
  const { totals } = check.provider;
  const sides = `the payment provider holds ${count(totals.refunds)} (${money(totals.amount)}), our records ${count(ours.refunds)} (${money(ours.amount)})`;
  if (check.verdict === "over-refunded")
    return `Refunded more than was charged (${money(check.charged)}): ${sides}.`;
  return `Refunds disagree with the provider: ${sides}.`;
}
