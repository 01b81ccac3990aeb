"use client";

import Link from "next/link";
import { useEffect, useRef } from "react";
import type { RefundPhase } from "@/lib/client/refund-runner";
import { describeFailure } from "@/components/shop/attempt-labels";
import { focusOutcome } from "@/components/ui/focus";
import { AlertIcon, CheckIcon, RepeatIcon, Spinner } from "@/components/ui/icons";
import { keyPagePath } from "./format";

interface RefundOutcomeProps {
  phase: RefundPhase;
  /** The key of the refund on screen, for its page. */
  refundKey: string | null;
  money: (minorUnits: number) => string;
  /** The order is refunded in full: the form is gone, and its focus comes here. */
  gone: boolean;
}

/** The words the status line says; the e2e tests read its data-phase instead. */
function statusText(phase: RefundPhase, money: (minorUnits: number) => string): string {
  switch (phase.kind) {
    case "idle":
      return "";
    case "sending":
      if (phase.attempt > 1)
        return `Retrying the refund (${phase.attempt} of ${phase.maxAttempts})…`;
      return phase.resumed
        ? "Resuming the refund interrupted by the reload, with the same key…"
        : "Refunding…";
    case "waiting":
      return `Retrying (${phase.nextAttempt} of ${phase.maxAttempts}) in ${(phase.inMs / 1000).toFixed(1)} s: ${describeFailure(phase.after)}.`;
    case "refunded":
      return phase.replayed
        ? `Refunded ${money(phase.refund.amount)} (the stored answer of this key: refunded once).`
        : `Refunded ${money(phase.refund.amount)}.`;
    case "refused":
      return `Not refunded: ${phase.detail}`;
    case "unconfirmed":
      return `Refund not confirmed: ${phase.detail}`;
  }
}

/**
 * What came of a press of Refund: a status line, always mounted, that
 * assistive technology hears at every step (sending, waiting to retry,
 * refunded), and an alert that takes the focus when the refund was refused
 * or could not be confirmed.
 */
export function RefundOutcome({ phase, refundKey, money, gone }: RefundOutcomeProps) {
  const alertRef = useRef<HTMLDivElement>(null);
  const statusRef = useRef<HTMLParagraphElement>(null);
  const settledBadly = phase.kind === "refused" || phase.kind === "unconfirmed";
  const text = statusText(phase, money);

  // What went wrong takes the focus, so keyboard and screen reader users land on it.
  useEffect(() => {
    if (settledBadly && alertRef.current) focusOutcome(alertRef.current);
  }, [settledBadly]);

  // Refunded in full, the button is gone: its focus goes to what replaced it.
  useEffect(() => {
    if (gone && statusRef.current && document.activeElement === document.body)
      statusRef.current.focus({ preventScroll: true });
  }, [gone]);

  return (
    <>
      {/* Always mounted, so that assistive technology hears every change. */}
      <p
        ref={statusRef}
        tabIndex={-1}
        role="status"
        aria-live="polite"
        aria-atomic="true"
        data-testid="refund-status"
        data-phase={phase.kind}
        className={
          text === "" || settledBadly
            ? "sr-only"
            : `mt-2 flex items-start gap-2 rounded-xl px-3 py-2 text-sm font-medium ${phase.kind === "refunded" ? "bg-sage-soft text-sage" : phase.kind === "waiting" ? "bg-clay-soft text-espresso" : "bg-oat text-espresso"}`
        }
      >
        {phase.kind === "sending" && <Spinner width={16} height={16} className="mt-0.5 shrink-0" />}
        {phase.kind === "waiting" && (
          <RepeatIcon width={16} height={16} className="mt-0.5 shrink-0 text-clay" />
        )}
        {phase.kind === "refunded" && (
          <CheckIcon width={16} height={16} className="mt-0.5 shrink-0" />
        )}
        <span>
          {/* What went wrong is said once, by the alert below. */}
          {!settledBadly && text}
          {phase.kind === "refunded" && refundKey && (
            <>
              {" "}
              <Link
                href={keyPagePath(refundKey)}
                className="font-semibold underline underline-offset-2"
                data-testid="refund-key"
              >
                See its key
              </Link>
            </>
          )}
        </span>
      </p>

      {settledBadly && (
        <div
          ref={alertRef}
          role="alert"
          tabIndex={-1}
          className="mt-2 flex items-start gap-2 rounded-xl bg-berry-soft px-3 py-2 text-sm text-espresso"
          data-testid="refund-alert"
        >
          <AlertIcon width={16} height={16} className="mt-0.5 shrink-0 text-berry" />
          <span>
            <span className="font-semibold text-berry">{text}</span>
            {phase.kind === "unconfirmed" && (
              <>
                {" "}
                Pressing Refund again resends the same Idempotency-Key: if the refund went through,
                you get its answer, not a second refund.
              </>
            )}
          </span>
        </div>
      )}
    </>
  );
}
