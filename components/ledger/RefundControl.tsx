"use client";

import Link from "next/link";
import { useRouter } from "next/navigation";
import {
  useCallback,
  useEffect,
  useId,
  useLayoutEffect,
  useRef,
  useState,
  useTransition,
  type FormEvent,
  type MouseEvent,
} from "react";
import { createPressGuard } from "@/lib/client/press-guard";
import { amountFieldText, readRefundAmount } from "@/lib/client/refund-amount";
import type { RefundPhase } from "@/lib/client/refund-runner";
import { describeFailure } from "@/components/shop/attempt-labels";
import { focusOutcome } from "@/components/ui/focus";
import { AlertIcon, CheckIcon, RepeatIcon, Spinner } from "@/components/ui/icons";
import { formatMoney } from "@/components/ui/money";
import { keyPagePath } from "./format";
import { useRefund } from "./useRefund";

interface RefundControlProps {
  orderId: string;
  /** What the order's payment took, in minor units. */
  charged: number;
  /** What refunds hold of it, pending or made (payments.refundedAmount), as the page was rendered. */
  reserved: number;
  currency: string;
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

/** The sign the page writes before an amount in `currency` ("$"). */
function currencySign(currency: string): string {
  return formatMoney(0, currency).replace(/[\d.,\s]/g, "");
}

/**
 * Refund one order: all that is left by default, or the amount typed into
 * "Refund part of it". One Idempotency-Key per press, kept for every retry
 * of it (lib/client/refund-runner.ts); a press while a refund runs is
 * ignored, and the second click of a double-click is not taken for a new
 * press of whatever replaced the button (press-guard.ts, as the shop does).
 * Once refunded, the page is rendered again from the records.
 */
export function RefundControl({ orderId, charged, reserved, currency }: RefundControlProps) {
  const router = useRouter();
  const [refreshing, startRefresh] = useTransition();
  const onRefunded = useCallback(() => startRefresh(() => router.refresh()), [router]);
  const { phase, key, unfinishedAmount, refund } = useRefund(orderId, onRefunded);
  const [guard] = useState(() => createPressGuard());
  const [partial, setPartial] = useState(false);
  const [amountText, setAmountText] = useState("");
  const [invalid, setInvalid] = useState<string | null>(null);
  const inputRef = useRef<HTMLInputElement>(null);
  const alertRef = useRef<HTMLDivElement>(null);
  const statusRef = useRef<HTMLParagraphElement>(null);
  const ids = useId();
  const money = (minorUnits: number) => formatMoney(minorUnits, currency);

  const left = charged - reserved;
  const busy = phase.kind === "sending" || phase.kind === "waiting";
  const settledBadly = phase.kind === "refused" || phase.kind === "unconfirmed";
  const reading = partial ? readRefundAmount(amountText, left, money) : null;
  // What a press would refund, when the field says it: all that is left unless an amount is typed.
  const asked = !reading ? left : reading.ok ? (reading.amount ?? left) : null;

  // Each step of a refund (it starts, it settles, the page is rendered again
  // from the records) changes what sits under the pointer: marked before the
  // next click can arrive, so the second click of a double-click is never a
  // press of the button in its new state (a refund that settled in 100 ms,
  // then a second refund of what is left).
  useLayoutEffect(() => {
    guard.changed();
  }, [phase.kind, refreshing, guard]);

  // What went wrong takes the focus, so keyboard and screen reader users land on it.
  useEffect(() => {
    if (settledBadly && alertRef.current) focusOutcome(alertRef.current);
  }, [settledBadly]);

  // Refunded in full, the button is gone: its focus goes to what replaced it.
  const gone = left <= 0;
  useEffect(() => {
    if (gone && statusRef.current && document.activeElement === document.body)
      statusRef.current.focus({ preventScroll: true });
  }, [gone]);

  // An earlier press whose outcome is unknown: its amount is offered again,
  // so that a press resends its key (adjusted while rendering, as React
  // advises for state that follows another's change).
  const [offered, setOffered] = useState(unfinishedAmount);
  if (offered !== unfinishedAmount) {
    setOffered(unfinishedAmount);
    if (unfinishedAmount !== undefined) {
      setPartial(unfinishedAmount !== null);
      setAmountText(unfinishedAmount === null ? "" : amountFieldText(unfinishedAmount));
    }
  }
  // A refund made: the field is done with, and the control offers what is left again.
  const made = phase.kind === "refunded" ? phase.refund : null;
  const [cleared, setCleared] = useState(made);
  if (made !== cleared) {
    setCleared(made);
    if (made) {
      setPartial(false);
      setAmountText("");
    }
  }

  function ignoreSecondClick(event: MouseEvent) {
    // Keyboard activation (a click with detail 0) is never part of a double-click.
    if (event.detail === 0) return;
    if (!guard.ignore({ x: event.clientX, y: event.clientY })) return;
    event.preventDefault();
    event.stopPropagation();
  }

  function submit(event: FormEvent) {
    event.preventDefault();
    if (busy || refreshing) return;
    const typed = partial ? readRefundAmount(amountText, left, money) : null;
    if (typed && !typed.ok) {
      setInvalid(typed.message);
      inputRef.current?.focus();
      return;
    }
    setInvalid(null);
    refund(typed?.ok ? typed.amount : null);
  }

  const text = statusText(phase, money);
  return (
    <div onClickCapture={ignoreSecondClick} data-testid="refund-control" data-order-id={orderId}>
      {!gone && (
        <form onSubmit={submit} noValidate className="flex flex-wrap items-end gap-x-3 gap-y-2">
          {partial && (
            <div className="min-w-0">
              <label htmlFor={`${ids}-amount`} className="block text-xs font-medium text-mocha">
                Amount to refund ({currency.toUpperCase()})
              </label>
              <div
                className={`mt-1 flex items-center rounded-lg border bg-white ${invalid ? "border-berry" : "border-sand focus-within:border-clay"}`}
              >
                <span aria-hidden="true" className="pl-2.5 text-sm text-mocha">
                  {currencySign(currency)}
                </span>
                <input
                  ref={inputRef}
                  id={`${ids}-amount`}
                  name="amount"
                  inputMode="decimal"
                  autoComplete="off"
                  placeholder={amountFieldText(left)}
                  value={amountText}
                  onChange={(event) => {
                    setAmountText(event.target.value);
                    setInvalid(null);
                  }}
                  aria-invalid={invalid !== null}
                  aria-describedby={`${ids}-hint${invalid ? ` ${ids}-error` : ""}`}
                  className="w-28 rounded-lg bg-transparent px-1.5 py-1.5 text-sm tabular-nums text-espresso outline-none"
                  data-testid="refund-amount"
                />
              </div>
            </div>
          )}
          <button
            type="submit"
            aria-disabled={busy || refreshing}
            className="inline-flex items-center gap-1.5 rounded-full bg-roast px-4 py-2 text-sm font-semibold text-cream transition-colors hover:bg-espresso active:translate-y-px aria-disabled:cursor-progress aria-disabled:bg-latte aria-disabled:text-espresso"
            data-testid="refund-button"
          >
            {busy && <Spinner width={16} height={16} />}
            {busy ? "Refunding…" : asked === null ? "Refund" : `Refund ${money(asked)}`}
          </button>
          <button
            type="button"
            onClick={() => {
              setPartial(!partial);
              setInvalid(null);
              if (!partial) requestAnimationFrame(() => inputRef.current?.focus());
            }}
            aria-expanded={partial}
            className="rounded px-1 py-2 text-sm font-medium text-clay underline decoration-sand underline-offset-4 hover:decoration-clay"
            data-testid="refund-partial"
          >
            {partial ? "Refund all that is left" : "Refund part of it"}
          </button>
          {partial && (
            <p id={`${ids}-hint`} className="basis-full text-xs text-mocha">
              Up to {money(left)} is left to refund; blank refunds all of it.
            </p>
          )}
          {invalid && (
            <p
              id={`${ids}-error`}
              className="basis-full text-sm font-medium text-berry"
              data-testid="refund-invalid"
            >
              {invalid}
            </p>
          )}
        </form>
      )}

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
          {phase.kind === "refunded" && key && (
            <>
              {" "}
              <Link
                href={keyPagePath(key)}
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
    </div>
  );
}
