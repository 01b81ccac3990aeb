import Link from "next/link";
import type { KeyInspection } from "@/lib/ledger/key-inspection";
import { formatMoney } from "@/components/ui/money";
import { AlertIcon, CheckIcon, KeyIcon } from "@/components/ui/icons";
import { KeyRequests } from "./KeyRequests";
import { formatInstant, formatTime } from "./format";

const STEPS: { point: keyof KeyInspection["reached"]; label: string; what: string }[] = [
  {
    point: "claimed",
    label: "Claimed",
    what: "the server took the key for one attempt, before doing anything else",
  },
  {
    point: "paymentStarted",
    label: "Payment started",
    what: "the cart was stored, then the payment provider asked to charge it",
  },
  {
    point: "charged",
    label: "Charged",
    what: "the payment provider answered, and its answer was stored with the key",
  },
  {
    point: "finished",
    label: "Finished",
    what: "the order and the answer for every retry were saved together",
  },
];

/** One key's life: what the server did with it, the requests that presented it, and the payment provider's records. */
export function KeyInspector({ inspection }: { inspection: KeyInspection }) {
  const { reached, lease, provider } = inspection;
  return (
    <div className="mt-6 space-y-5">
      <p className="flex flex-wrap items-center gap-2 text-sm">
        <span
          className={`rounded-full px-3 py-1 font-semibold ${inspection.state === "complete" ? "bg-sage-soft text-sage" : "bg-honey/40 text-roast"}`}
          data-testid="key-state"
          data-state={inspection.state}
        >
          {inspection.state === "complete"
            ? `Complete: replays its ${inspection.response?.status ?? ""} answer`
            : `In flight at ${inspection.recoveryPoint.replace("_", " ")}`}
        </span>
        <span className="text-mocha">
          Recovery point{" "}
          <code className="font-mono text-espresso" data-testid="key-recovery-point">
            {inspection.recoveryPoint}
          </code>
        </span>
      </p>

      <div className="grid gap-5 sm:grid-cols-2">
        <Section title="What the server did" icon>
          <Steps reached={reached} />
        </Section>
        <Section title="The requests that presented it">
          <KeyRequests requests={inspection.requests} />
        </Section>
      </div>

      <Section title="Stored with the key">
        <dl className="grid grid-cols-1 gap-x-4 gap-y-2 text-sm sm:grid-cols-[10rem_minmax(0,1fr)]">
          <Field label="Request">
            <code className="font-mono">
              {inspection.request.method} {inspection.request.path}
            </code>
          </Field>
          <Field label="Fingerprint">
            <code className="break-all font-mono text-xs">{inspection.fingerprint}</code>
            <span className="mt-1 block text-xs text-mocha">
              A hash of the request (method, path and body): a retry under this key must send the
              same request, or it is refused as a different one.
            </span>
          </Field>
          <Field label="Stored answer">
            {inspection.response ? (
              <span data-testid="key-response-status">{inspection.response.status}</span>
            ) : (
              "none yet"
            )}
          </Field>
          <Field label="Held by">
            {lease ? (
              <span data-testid="key-lease">
                the attempt <code className="break-all font-mono text-xs">{lease.owner}</code> until{" "}
                {formatInstant(lease.expiresAt)}
                {lease.expired && (
                  <strong className="font-semibold text-berry">
                    {" "}
                    (run out: a retry or the recovery worker may take it over)
                  </strong>
                )}
              </span>
            ) : (
              <span data-testid="key-lease">nobody: a complete key only answers retries</span>
            )}
          </Field>
          <Field label="Key expires">{formatInstant(inspection.expiresAt)}</Field>
        </dl>
      </Section>

      <Section title="At the payment provider">
        <p className="text-sm text-mocha">
          Provider key{" "}
          <code
            className="break-all font-mono text-xs text-espresso"
            data-testid="key-provider-key"
          >
            {inspection.providerKey}
          </code>
        </p>
        {provider.available ? (
          <ProviderIntents intents={provider.paymentIntents} />
        ) : (
          <p className="mt-2 rounded-xl bg-honey/40 p-3 text-sm text-roast">{provider.detail}</p>
        )}
      </Section>

      <Section title="What it produced">
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
              <li key={payment.providerPaymentId}>
                Our payment record: {payment.status},{" "}
                {formatMoney(payment.amount, payment.currency)},{" "}
                <code className="font-mono">{payment.providerPaymentId}</code>
                {payment.declineCode && ` (${payment.declineCode})`}
              </li>
            ))}
          </ul>
        )}
      </Section>
    </div>
  );
}

function ProviderIntents({
  intents,
}: {
  intents: Extract<KeyInspection["provider"], { available: true }>["paymentIntents"];
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

/** The recovery points, each with when the key reached it (the database's clock). */
function Steps({ reached }: { reached: KeyInspection["reached"] }) {
  return (
    <ol className="space-y-3 border-l-2 border-sand pl-4" data-testid="key-timeline">
      {STEPS.map(({ point, label, what }) => {
        const at = reached[point];
        return (
          <li key={point} className="relative" data-point={point} data-reached={at !== null}>
            <span
              aria-hidden="true"
              className={`absolute -left-[1.6rem] top-0.5 grid size-5 place-items-center rounded-full ring-4 ring-white ${at ? "bg-sage text-white" : "bg-oat text-mocha"}`}
            >
              {at && <CheckIcon width={12} height={12} strokeWidth={2.5} />}
            </span>
            <p className="text-sm font-semibold text-espresso">
              {label}{" "}
              <span className="font-normal tabular-nums text-mocha">
                {at ? <time dateTime={at}>{formatTime(at)}</time> : "not reached"}
              </span>
            </p>
            <p className="text-xs text-mocha">{what}</p>
          </li>
        );
      })}
    </ol>
  );
}

function Section({
  title,
  icon = false,
  children,
}: {
  title: string;
  icon?: boolean;
  children: React.ReactNode;
}) {
  return (
    <section className="rounded-2xl border border-sand bg-white p-4 sm:p-5">
      <h2 className="mb-3 flex items-center gap-2 font-display text-lg font-semibold text-espresso">
        {icon && <KeyIcon width={18} height={18} className="text-clay" />}
        {title}
      </h2>
      {children}
    </section>
  );
}

function Field({ label, children }: { label: string; children: React.ReactNode }) {
  return (
    <>
      <dt className="text-mocha">{label}</dt>
      <dd className="min-w-0 text-espresso">{children}</dd>
    </>
  );
}
