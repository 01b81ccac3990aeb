"use client";

import { useRouter } from "next/navigation";
import {
  useCallback,
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
import { Spinner } from "@/components/ui/icons";
import { formatMoney } from "@/components/ui/money";
import { RefundOutcome } from "./RefundOutcome";
import { useRefund } from "./useRefund";

interface RefundControlProps {
  orderId: string;
  /** What the order's payment took, in minor units. */
  charged: number;
  /** What refunds hold of it, pending or made (payments.refundedAmount), as the page was rendered. */
  reserved: number;
  currency: string;
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
  const ids = useId();
  const money = (minorUnits: number) => formatMoney(minorUnits, currency);

  const left = charged - reserved;
  const busy = phase.kind === "sending" || phase.kind === "waiting";
  const reading = partial ? readRefundAmount(amountText, left, money) : null;
  // What a press would refund, when the field says it: all that is left unless an amount is typed.
  const asked = !reading ? left : reading.ok ? (reading.amount ?? left) : null;

  // Each step of a refund (it starts, it settles, the page is rendered again
  // from the records) changes what sits under the pointer: marked before the
  // next click can arrive, so the second click of a double-click is never a
  // press of the button in its new state (a refund that settled in 100 ms,
  // then a second refund of what is left). Not when the control first
  // appears: nothing was replaced, and two quick presses of a fresh page's
  // button (an amount refused, then corrected) are two presses.
  const step = useRef<string | null>(null);
  useLayoutEffect(() => {
    const now = `${phase.kind} ${refreshing}`;
    if (step.current !== null && step.current !== now) guard.changed();
    step.current = now;
  }, [phase.kind, refreshing, guard]);

  // Refunded in full: the form goes, and the outcome takes its focus.
  const gone = left <= 0;

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

      <RefundOutcome phase={phase} refundKey={key} money={money} gone={gone} />
    </div>
  );
}
