"use client";

import { useEffect, useRef } from "react";
import type { CheckoutPhase } from "@/lib/client/checkout-phase";
import { focusOutcome } from "@/components/ui/focus";
import { AlertIcon, CheckIcon, RepeatIcon, Spinner } from "@/components/ui/icons";
import { describeFailure } from "./attempt-labels";

/** The words the status region announces; the e2e tests read these. */
export function statusText(phase: CheckoutPhase, keyless = false): string {
  switch (phase.kind) {
    case "idle":
      return "";
    case "paying":
      if (phase.attempt > 1) return `Retrying (${phase.attempt} of ${phase.maxAttempts})…`;
      return phase.resumed
        ? "Resuming the payment interrupted by the reload, with the same key…"
        : "Paying…";
    case "waiting":
      return `Retrying (${phase.nextAttempt} of ${phase.maxAttempts}) in ${(phase.inMs / 1000).toFixed(1)} s: ${describeFailure(phase.after)}.`;
    case "paid":
      if (keyless)
        return "Paid without an Idempotency-Key: the order box says how often it was charged";
      return phase.replayed
        ? "Paid (replayed: the stored result of this key, no second charge)"
        : "Paid";
    case "authenticating":
      return "Your bank asks you to confirm this payment: taking you to its page…";
    case "confirming":
      return phase.looks < 4
        ? "Back from your bank: confirming the payment…"
        : "Your bank has not confirmed the payment yet. This page keeps checking; nothing more will be charged.";
    case "declined":
      return `Payment declined: ${phase.detail}`;
    case "failed":
      return `Failed: ${phase.detail}`;
  }
}

const tone: Record<CheckoutPhase["kind"], string> = {
  idle: "",
  paying: "bg-oat text-espresso",
  waiting: "bg-clay-soft text-espresso",
  paid: "bg-sage-soft text-sage",
  authenticating: "bg-oat text-espresso",
  confirming: "bg-oat text-espresso",
  declined: "bg-berry-soft text-berry",
  failed: "bg-berry-soft text-berry",
};

/**
 * While the payment runs, the Pay button says "Paying…" and the attempts
 * timeline shows each attempt and its retry; once paid, the order box says
 * what came of it (for a payment sent without a key, only once the charges
 * are counted). The region only speaks then, so nothing is said twice on
 * screen and no success shows beside damage. A resumed run is the
 * exception: only here does the page say why it is paying without a press.
 */
function saidElsewhere(phase: CheckoutPhase): boolean {
  return (
    (phase.kind === "paying" && !phase.resumed) || phase.kind === "waiting" || phase.kind === "paid"
  );
}

export function CheckoutStatus({ phase, keyless }: { phase: CheckoutPhase; keyless: boolean }) {
  const text = statusText(phase, keyless);
  const shown = text !== "" && !saidElsewhere(phase);
  const boxRef = useRef<HTMLDivElement>(null);
  const alertRef = useRef<HTMLDivElement>(null);
  const settledBadly = phase.kind === "declined" || phase.kind === "failed";

  // A keyboard or screen reader user lands on what went wrong and what to do
  // next; the whole outcome comes into view, not only the alert.
  useEffect(() => {
    if (settledBadly && alertRef.current && boxRef.current)
      focusOutcome(alertRef.current, boxRef.current);
  }, [settledBadly]);

  return (
    // Nothing shown: no box either, so the checkout's spacing ignores it.
    <div ref={boxRef} className={shown ? `rounded-xl ${tone[phase.kind]}` : "contents"}>
      {/* Always mounted, so that assistive technology hears every change. */}
      <p
        role="status"
        aria-live="polite"
        aria-atomic="true"
        data-testid="checkout-status"
        data-phase={phase.kind}
        className={shown ? "flex items-start gap-2 px-3.5 py-2.5 text-sm font-medium" : "sr-only"}
      >
        {shown &&
          (phase.kind === "paying" ||
            phase.kind === "authenticating" ||
            phase.kind === "confirming") && (
            <Spinner width={18} height={18} className="mt-px shrink-0" />
          )}
        {phase.kind === "waiting" && (
          <RepeatIcon width={18} height={18} className="mt-px shrink-0 text-clay" />
        )}
        {phase.kind === "paid" && <CheckIcon width={18} height={18} className="mt-px shrink-0" />}
        {settledBadly && <AlertIcon width={18} height={18} className="mt-px shrink-0" />}
        <span>{text}</span>
      </p>

      {phase.kind === "declined" && (
        <div
          ref={alertRef}
          role="alert"
          tabIndex={-1}
          data-testid="checkout-alert"
          className="border-t border-berry/15 px-3.5 py-2.5 text-sm text-espresso"
        >
          <strong className="font-semibold">Your cart is saved.</strong> Choose another payment
          method, then pay again.
        </div>
      )}
      {phase.kind === "failed" && (
        <div
          ref={alertRef}
          role="alert"
          tabIndex={-1}
          data-testid="checkout-alert"
          className="border-t border-berry/15 px-3.5 py-2.5 text-sm text-espresso"
        >
          {phase.outcomeUnknown ? (
            <>
              <strong className="font-semibold">Payment not confirmed.</strong> Paying again resends
              the same Idempotency-Key: if an earlier attempt went through, you get its result, not
              a second charge.
            </>
          ) : (
            <>
              <strong className="font-semibold">Nothing was charged.</strong> The server refused
              this request; sending it again would not help.
            </>
          )}
        </div>
      )}
    </div>
  );
}
