import Link from "next/link";
import type { RefundKeyInspection } from "@/lib/ledger/key-inspection";
import { formatMoney } from "@/components/ui/money";
import { AlertIcon, CheckIcon } from "@/components/ui/icons";
import { KeySection, ProviderKeyLine, type KeyStep } from "./KeySection";
import { formatInstant } from "./format";

/** A refund's recovery points (lib/refunds/refund.ts), and when its key reached each. */
export function refundSteps({ reached }: RefundKeyInspection): KeyStep[] {
  return [
    {
      point: "claimed",
      label: "Claimed",
      what: "the server took the key for one attempt, before doing anything else",
      at: reached.claimed,
    },
    {
      point: "refundStarted",
      label: "Refund started",
      what: "the amount was reserved against the order's payment with a pending refund row, then the payment provider asked to refund it",
      at: reached.refundStarted,
    },
    {
      point: "providerAnswered",
      label: "Provider answered",
      what: "the payment provider answered; its answer is saved with the refund, in one commit",
      at: reached.providerAnswered,
    },
    {
      point: "finished",
      label: "Finished",
      what: "the refund, the provider's answer and the answer for every retry were saved together",
      at: reached.finished,
    },
  ];
}

/** What the provider holds for a refund's key: the order's PaymentIntent's refunds made under its provider key. */
export function RefundProvider({ inspection }: { inspection: RefundKeyInspection }) {
  const { provider } = inspection;
  return (
    <KeySection title="At the payment provider">
      <ProviderKeyLine providerKey={inspection.providerKey} />
      {!provider.available ? (
        <p className="mt-2 rounded-xl bg-honey/40 p-3 text-sm text-roast">{provider.detail}</p>
      ) : provider.paymentIntent === null ? (
        <p className="mt-2 text-sm text-mocha" data-testid="key-provider-refunds" data-refunds={0}>
          No paid order by that id, so nothing there to refund or to ask about.
        </p>
      ) : (
        <ProviderRefunds paymentIntent={provider.paymentIntent} refunds={provider.refunds} />
      )}
    </KeySection>
  );
}

function ProviderRefunds({
  paymentIntent,
  refunds,
}: {
  paymentIntent: string;
  refunds: Extract<RefundKeyInspection["provider"], { available: true }>["refunds"];
}) {
  const made = refunds.filter((refund) => refund.status === "succeeded").length;
  return (
    <>
      <p className="mt-1 text-sm text-mocha">
        Refunds of the PaymentIntent{" "}
        <code className="break-all font-mono text-xs text-espresso">{paymentIntent}</code> made
        under it:
      </p>
      <p
        className={`mt-2 inline-flex items-center gap-1.5 rounded-full px-3 py-1 text-xs font-semibold ${made === 1 ? "bg-sage-soft text-sage" : made === 0 ? "bg-oat text-mocha" : "bg-berry text-white"}`}
        data-testid="key-provider-refunds"
        data-refunds={made}
      >
        {made > 1 ? <AlertIcon width={14} height={14} /> : <CheckIcon width={14} height={14} />}
        {made === 0 ? "No refund" : made === 1 ? "1 refund" : `${made} refunds for one key: a bug`}
      </p>
      <ul className="mt-3 space-y-2">
        {refunds.map((refund) => (
          <li
            key={refund.id}
            className="flex flex-wrap justify-between gap-2 rounded-xl bg-cream p-3 text-sm"
            data-testid="key-provider-refund"
          >
            <code className="break-all font-mono text-xs text-espresso">{refund.id}</code>
            <span className="tabular-nums text-espresso">
              {formatMoney(refund.amount, refund.currency)} · {refund.status} ·{" "}
              {formatInstant(refund.createdAt)}
            </span>
          </li>
        ))}
        {refunds.length === 0 && (
          <li className="text-sm text-mocha">
            None under this provider key: the refund was never asked for, or was refused before it
            was made.
          </li>
        )}
      </ul>
    </>
  );
}

/** What a refund's key made: the refund row, pending until the provider answered. */
export function RefundMade({ inspection }: { inspection: RefundKeyInspection }) {
  const { refund } = inspection;
  return (
    <KeySection title="What it produced">
      {refund ? (
        <div className="text-sm text-espresso" data-testid="key-refund" data-status={refund.status}>
          <p>
            Refund <code className="break-all font-mono text-xs">{refund.id}</code>,{" "}
            <strong className="font-semibold">{formatMoney(refund.amount, refund.currency)}</strong>
            , {refund.status === "pending" ? "in progress" : refund.status}
            {refund.refusalCode && ` (${refund.refusalCode})`}, {formatInstant(refund.createdAt)}.
          </p>
          <p className="mt-1 text-xs text-mocha">
            Of order <code className="break-all font-mono">{refund.orderId}</code>
            {refund.providerRefundId && (
              <>
                ; the provider&apos;s id{" "}
                <code className="break-all font-mono" data-testid="key-refund-provider-id">
                  {refund.providerRefundId}
                </code>
              </>
            )}
            .{" "}
            <Link href="/orders" className="font-semibold text-clay underline underline-offset-2">
              All orders
            </Link>
          </p>
        </div>
      ) : (
        <p className="text-sm text-mocha" data-testid="key-refund" data-status="">
          No refund
          {inspection.response && inspection.response.status >= 400
            ? `: the request was answered ${inspection.response.status}, and nothing was refunded`
            : " yet"}
          .
        </p>
      )}
    </KeySection>
  );
}
