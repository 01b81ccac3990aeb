import { Fragment } from "react";
import type { KeyInspection } from "@/lib/ledger/key-inspection";
import { CheckIcon } from "@/components/ui/icons";
import { CheckoutMade, CheckoutProvider, checkoutSteps } from "./KeyCheckout";
import { KeyRequests } from "./KeyRequests";
import { KeySection, type KeyStep } from "./KeySection";
import { RefundMade, RefundProvider, refundSteps } from "./KeyRefund";
import { formatInstant, formatTime } from "./format";

/**
 * One key's life: what the server did with it, the requests that presented
 * it, and the payment provider's records. A checkout's key and a refund's
 * differ in their steps, in what they made and in what the provider holds.
 */
export function KeyInspector({ inspection }: { inspection: KeyInspection }) {
  const { lease } = inspection;
  const steps =
    inspection.operation === "refund" ? refundSteps(inspection) : checkoutSteps(inspection);
  return (
    <div className="mt-6 space-y-5">
      <p className="flex flex-wrap items-center gap-2 text-sm">
        <span
          className="rounded-full bg-oat px-3 py-1 font-semibold text-espresso"
          data-testid="key-operation"
          data-operation={inspection.operation}
        >
          {inspection.operation === "refund" ? "A refund's key" : "A checkout's key"}
        </span>
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
        <KeySection title="What the server did" icon>
          <Steps steps={steps} />
        </KeySection>
        <KeySection title="The requests that presented it">
          <KeyRequests requests={inspection.requests} operation={inspection.operation} />
        </KeySection>
      </div>

      <KeySection title="Stored with the key">
        <dl className="grid grid-cols-1 gap-x-4 gap-y-2 text-sm sm:grid-cols-[10rem_minmax(0,1fr)]">
          <Field label="Request">
            <code className="break-words font-mono" data-testid="key-stored-request">
              {inspection.request.method} <PathWithBreaks path={inspection.request.path} />
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
      </KeySection>

      {inspection.operation === "refund" ? (
        <>
          <RefundProvider inspection={inspection} />
          <RefundMade inspection={inspection} />
        </>
      ) : (
        <>
          <CheckoutProvider inspection={inspection} />
          <CheckoutMade inspection={inspection} />
        </>
      )}
    </div>
  );
}

/** The recovery points, each with when the key reached it (the database's clock). */
function Steps({ steps }: { steps: KeyStep[] }) {
  return (
    <ol className="space-y-3 border-l-2 border-sand pl-4" data-testid="key-timeline">
      {steps.map(({ point, label, what, at }) => {
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

/** A path that may wrap after any of its slashes, rather than inside a word, on a narrow screen. */
function PathWithBreaks({ path }: { path: string }) {
  return path.split("/").map((segment, index) => (
    <Fragment key={index}>
      {index > 0 && (
        <>
          /<wbr />
        </>
      )}
      {segment}
    </Fragment>
  ));
}

function Field({ label, children }: { label: string; children: React.ReactNode }) {
  return (
    <>
      <dt className="text-mocha">{label}</dt>
      <dd className="min-w-0 text-espresso">{children}</dd>
    </>
  );
}
