import Link from "next/link";
import type { CheckoutKeyInspection } from "@/lib/ledger/key-inspection";
import { formatMoney } from "@/components/ui/money";
import { AlertIcon, CheckIcon } from "@/components/ui/icons";
import { KeySection, ProviderKeyLine, type KeyStep } from "./KeySection";
import { formatInstant } from "./format";

/** A checkout's recovery points (lib/orders/checkout.ts), and when its key reached each. */
export function checkoutSteps({ reached }: CheckoutKeyInspection): KeyStep[] {
  return [
    {
      point: "claimed",
      label: "Claimed",
      what: "the server took the key for one attempt and stored the cart with it, in one commit, before anything else",
      at: reached.claimed,
    },
    {
      point: "paymentStarted",
      label: "Payment started",
      what: "from then on, the payment provider may be asked to charge that cart, under the provider key below",
      at: reached.paymentStarted,
    },
    {
      point: "charged",
      label: "Charged",
      what: "the payment provider answered; its answer is saved with the order, in one commit",
      at: reached.charged,
    },
    {
      point: "finished",
      label: "Finished",
      what: "the order, the provider's answer and the answer for every retry were saved together",
      at: reached.finished,
    },
  ];
}

/** What the provider holds under a checkout's provider key: its PaymentIntents and their charges. */
export function CheckoutProvider({ inspection }: { inspection: CheckoutKeyInspection }) {
  const { provider } = inspection;
  return (
    <KeySection title="At the payment provider">
      <ProviderKeyLine providerKey={inspection.providerKey} />
      {provider.available ? (
        <ProviderIntents intents={provider.paymentIntents} />
      ) : (
        <p className="mt-2 rounded-xl bg-honey/40 p-3 text-sm text-roast">{provider.detail}</p>
      )}
    </KeySection>
  );
}

/** What a checkout's key made: the order, and our payment rows. */
export function CheckoutMade({ inspection }: { inspection: CheckoutKeyInspection }) {
  return (
    <KeySection title="What it produced">
      {inspection.order ? (
        <p className="text-sm text-espresso" data-testid="key-order">
          Order <code className="break-all font-mono text-xs">{inspection.order.id}</code>,{" "}
          {formatMoney(inspection.order.amount, inspection.order.currency)},{" "}
          {formatInstant(inspection.order.createdAt)}.{" "}
          <Link href="/orders" className="font-semibold text-clay underline underline-offset-2">
            All orders
          </Link>
        </p>
      ) : (
        <p className="text-sm text-mocha" data-testid="key-order">
          No order
          {inspection.payments.some((payment) => payment.status === "declined")
            ? ": the card was declined"
            : " yet"}
          .
        </p>
      )}
      {inspection.payments.length > 0 && (
        <ul className="mt-2 space-y-1 text-xs text-mocha">
          {inspection.payments.map((payment) => (
            <li key={payment.providerPaymentId} data-testid="key-payment">
              Our payment record: {payment.status}, {formatMoney(payment.amount, payment.currency)},{" "}
              <code className="font-mono">{payment.providerPaymentId}</code>
              {payment.declineCode && ` (${payment.declineCode})`}
              {payment.settledBy &&
                `, settled by the ${payment.settledBy === "webhook" ? "provider's event" : "recovery worker"}`}
              {payment.events.length > 0 && (
                <ul className="mt-1 space-y-0.5 pl-3" data-testid="key-events">
                  {payment.events.map((event) => (
                    <li key={event.eventId} className="break-all">
                      Event <code className="font-mono text-espresso">{event.type}</code>:{" "}
                      {event.outcome} <span className="font-mono">({event.eventId})</span>
                    </li>
                  ))}
                </ul>
              )}
            </li>
          ))}
        </ul>
      )}
    </KeySection>
  );
}

function ProviderIntents({
  intents,
}: {
  intents: Extract<CheckoutKeyInspection["provider"], { available: true }>["paymentIntents"];
}) {
  const charged = intents
    .flatMap((intent) => intent.charges)
    .filter((charge) => charge.status === "succeeded").length;
  return (
    <>
      <p
        className={`mt-2 inline-flex items-center gap-1.5 rounded-full px-3 py-1 text-xs font-semibold ${charged === 1 ? "bg-sage-soft text-sage" : charged === 0 ? "bg-oat text-mocha" : "bg-berry text-white"}`}
        data-testid="key-provider-charges"
        data-charges={charged}
      >
        {charged > 1 ? <AlertIcon width={14} height={14} /> : <CheckIcon width={14} height={14} />}
        {charged === 0
          ? "No successful charge"
          : charged === 1
            ? "1 successful charge"
            : `${charged} successful charges for one key: a bug`}
      </p>
      <ul className="mt-3 space-y-2">
        {intents.map((intent) => (
          <li
            key={intent.id}
            className="rounded-xl bg-cream p-3 text-sm"
            data-testid="key-payment-intent"
          >
            <p className="flex flex-wrap justify-between gap-2">
              <code className="break-all font-mono text-xs text-espresso">{intent.id}</code>
              <span className="tabular-nums text-espresso">
                {formatMoney(intent.amount, intent.currency)} · {intent.status}
              </span>
            </p>
            <ul className="mt-1.5 space-y-0.5 text-xs text-mocha">
              {intent.charges.map((charge) => (
                <li key={charge.id}>
                  Charge <code className="font-mono">{charge.id}</code>: {charge.status}
                  {charge.failureCode && ` (${charge.failureCode})`},{" "}
                  {formatInstant(charge.createdAt)}
                </li>
              ))}
            </ul>
          </li>
        ))}
        {intents.length === 0 && (
          <li className="text-sm text-mocha">
            No PaymentIntent under this provider key: the charge was never asked for.
          </li>
        )}
      </ul>
    </>
  );
}
