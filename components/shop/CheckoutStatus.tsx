"use client";

import { useEffect, useRef } from "react";
import type { AttemptInfo } from "@/lib/client/checkout";
import { AlertIcon, CheckIcon, Spinner } from "@/components/ui/icons";

export type CheckoutPhase =
  | { kind: "idle" }
  | { kind: "paying"; attempt: number; maxAttempts: number; retrying: boolean }
  | { kind: "paid" }
  | { kind: "declined"; detail: string }
  | { kind: "failed"; detail: string };

/** The words the status region announces; the e2e tests read these. */
export function statusText(phase: CheckoutPhase): string {
  switch (phase.kind) {
    case "idle":
      return "";
    case "paying":
      return phase.retrying ? `Retrying (${phase.attempt} of ${phase.maxAttempts})…` : "Paying…";
    case "paid":
      return "Paid";
    case "declined":
      return `Payment declined: ${phase.detail}`;
    case "failed":
      return `Failed: ${phase.detail}`;
  }
}

const tone: Record<CheckoutPhase["kind"], string> = {
  idle: "",
  paying: "bg-oat text-espresso",
  paid: "bg-sage-soft text-sage",
  declined: "bg-berry-soft text-berry",
  failed: "bg-berry-soft text-berry",
};

interface CheckoutStatusProps {
  phase: CheckoutPhase;
  idempotencyKey: string | null;
  attempts: readonly AttemptInfo[];
}

export function CheckoutStatus({ phase, idempotencyKey, attempts }: CheckoutStatusProps) {
  const text = statusText(phase);
  const boxRef = useRef<HTMLDivElement>(null);
  const settledBadly = phase.kind === "declined" || phase.kind === "failed";

  // The cart column scrolls on short screens: keep a new outcome in view.
  useEffect(() => {
    if (settledBadly) boxRef.current?.scrollIntoView({ block: "nearest" });
  }, [settledBadly]);

  return (
    <div className="space-y-3">
      <div ref={boxRef} className={text ? `rounded-xl ${tone[phase.kind]}` : undefined}>
        {/* Always mounted, so that assistive technology hears every change. */}
        <p
          role="status"
          aria-live="polite"
          aria-atomic="true"
          data-testid="checkout-status"
          className={text ? "flex items-start gap-2 px-3.5 py-2.5 text-sm font-medium" : "sr-only"}
        >
          {phase.kind === "paying" && <Spinner width={18} height={18} className="mt-px shrink-0" />}
          {phase.kind === "paid" && <CheckIcon width={18} height={18} className="mt-px shrink-0" />}
          {settledBadly && <AlertIcon width={18} height={18} className="mt-px shrink-0" />}
          <span>{text}</span>
        </p>

        {phase.kind === "declined" && (
          <div role="alert" data-testid="checkout-alert" className="border-t border-berry/15 px-3.5 py-2.5 text-sm text-espresso">
            <strong className="font-semibold">Your cart is saved.</strong> Choose another payment method, then pay again.
          </div>
        )}
        {phase.kind === "failed" && (
          <div role="alert" data-testid="checkout-alert" className="border-t border-berry/15 px-3.5 py-2.5 text-sm text-espresso">
            <strong className="font-semibold">Payment not confirmed.</strong> Paying again resends the same
            Idempotency-Key: if the first attempt went through, you get its result, not a second charge.
          </div>
        )}
      </div>

      {idempotencyKey && attempts.length > 0 && (
        <details className="rounded-xl border border-sand bg-cream px-3.5 py-2.5 text-xs text-mocha">
          <summary className="cursor-pointer select-none font-medium text-espresso">
            Request details ({attempts.length} {attempts.length === 1 ? "attempt" : "attempts"})
          </summary>
          <p className="mt-2">
            Idempotency-Key <code className="break-all font-mono text-espresso">{idempotencyKey}</code>
          </p>
          <ol className="mt-2 space-y-1" aria-label="Attempts">
            {attempts.map((attempt) => (
              <li key={attempt.n} className="flex flex-wrap gap-x-2">
                <span className="font-medium text-espresso">#{attempt.n}</span>
                <span>{describeAttempt(attempt)}</span>
                {attempt.requestId && <code className="break-all font-mono">{attempt.requestId}</code>}
              </li>
            ))}
          </ol>
        </details>
      )}
    </div>
  );
}

function describeAttempt(attempt: AttemptInfo): string {
  const { status } = attempt;
  let what: string;
  if (status === "network error") what = "network error";
  else if (status === 409) what = "409 still in progress";
  else if (status === 402) what = "402 declined";
  else if (status >= 200 && status < 300) what = `${status} ${attempt.replayed ? "replayed" : "created"}`;
  else what = String(status);
  return attempt.retryInMs === null ? what : `${what}, retry in ${(attempt.retryInMs / 1000).toFixed(1)} s`;
}
