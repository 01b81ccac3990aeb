"use client";

import { useEffect, useMemo, useRef, useState } from "react";
import type { Cart, Order, PaymentMethod } from "@/lib/client/api-types";
import { finishAttempt, interruptAttempt, markInterrupted, nextRun, startAttempt, type AttemptLog } from "@/lib/client/attempt-log";
import { submitCheckout, type AttemptInfo, type CheckoutResult } from "@/lib/client/checkout";
import { DEFAULT_STRATEGY, type CheckoutStrategy } from "@/lib/client/demo";
import { RETRY_POLICY } from "@/lib/client/retry-policy";
import { endsIntent, intentForPay, markUnresolved } from "@/lib/client/intent-decision";
import { createIntentStore, samePayload, shouldAutoResume, startRun, type StoredIntent } from "@/lib/client/intent-store";
import type { CheckoutPhase } from "@/lib/client/checkout-phase";

export interface PaidOrder {
  order: Order;
  replayed: boolean;
  /** Null only for the lab's broken strategy. */
  key: string | null;
  attempts: number;
}

/** The intent on screen. `stored` is null for the broken strategy: without a key there is nothing to resume. */
interface ActiveIntent {
  key: string | null;
  stored: StoredIntent | null;
  /** Paid or definitely failed: late answers of overlapping runs must not bring it back to life. */
  ended: boolean;
  runsInFlight: number;
  /** Runs started so far, across reloads: numbers each run's attempts in the log. */
  runsStarted: number;
}

export interface PayRequest {
  cart: Cart;
  paymentMethod: PaymentMethod;
  strategy: CheckoutStrategy;
}

interface UseCheckoutOptions {
  /** A reload found an unfinished intent: put its cart back on screen. */
  onRestore: (intent: StoredIntent) => void;
  /** Every run of the intent has finished (the demo panel resets its faults). */
  onSettled: () => void;
}

/**
 * The checkout's state machine: one intent at a time, its attempts, and what
 * the page says about them. The intent (key, cart, attempts) is written to
 * sessionStorage before the first attempt and after each one, and removed
 * when the intent ends, so a reload mid-payment resumes the same key.
 */
export function useCheckout({ onRestore, onSettled }: UseCheckoutOptions) {
  const [phase, setPhase] = useState<CheckoutPhase>({ kind: "idle" });
  const [paid, setPaid] = useState<PaidOrder | null>(null);
  const [log, setLog] = useState<AttemptLog>([]);
  const [key, setKey] = useState<string | null>(null);
  const [keyless, setKeyless] = useState(false);

  const store = useMemo(() => createIntentStore(), []);
  const activeRef = useRef<ActiveIntent | null>(null);
  // The log is appended to by overlapping runs: keep the latest in a ref, not a stale closure.
  const logRef = useRef<AttemptLog>([]);
  // Set when the page starts to unload: the browser then cancels the attempt
  // in flight, which is the reload's doing, not the network's.
  const leavingRef = useRef(false);
  useEffect(() => {
    const leaving = () => {
      leavingRef.current = true;
    };
    window.addEventListener("beforeunload", leaving);
    window.addEventListener("pagehide", leaving);
    return () => {
      window.removeEventListener("beforeunload", leaving);
      window.removeEventListener("pagehide", leaving);
    };
  }, []);
  const settledRef = useRef(onSettled);
  const restoreRef = useRef(onRestore);
  useEffect(() => {
    settledRef.current = onSettled;
    restoreRef.current = onRestore;
  }, [onSettled, onRestore]);

  function updateLog(intent: ActiveIntent, change: (log: AttemptLog) => AttemptLog) {
    if (activeRef.current !== intent) return;
    logRef.current = change(logRef.current);
    setLog(logRef.current);
    if (intent.stored && !intent.ended) {
      intent.stored = { ...intent.stored, attempts: logRef.current };
      store.save(intent.stored);
    }
  }

  function beginIntent(intent: ActiveIntent, attempts: AttemptLog) {
    activeRef.current = intent;
    logRef.current = attempts;
    setLog(attempts);
    setKey(intent.key);
    setKeyless(intent.key === null);
    setPaid(null);
  }

  async function run(intent: ActiveIntent, request: PayRequest, resumed: boolean) {
    const { cart, paymentMethod, strategy } = request;
    intent.runsStarted += 1;
    const runNumber = intent.runsStarted;
    intent.runsInFlight += 1;
    if (intent.stored) store.save((intent.stored = startRun(intent.stored)));
    setPhase({ kind: "paying", attempt: 1, maxAttempts: RETRY_POLICY.maxAttempts, resumed });

    let result: CheckoutResult;
    try {
      result = await submitCheckout({
        cart,
        paymentMethod,
        idempotencyKey: intent.key,
        url: strategy.url,
        onAttemptStart: ({ n, maxAttempts }) => {
          // Still here, so whatever started an unload was cancelled.
          leavingRef.current = false;
          updateLog(intent, (current) => startAttempt(current, runNumber, n));
          if (!intent.ended) setPhase({ kind: "paying", attempt: n, maxAttempts, resumed });
        },
        onAttempt: (attempt: AttemptInfo) => {
          if (attempt.failure === "network" && leavingRef.current) {
            updateLog(intent, (current) => interruptAttempt(current, runNumber, attempt.n));
            return;
          }
          updateLog(intent, (current) => finishAttempt(current, runNumber, attempt));
          if (attempt.retryInMs !== null && !intent.ended) {
            setPhase({ kind: "waiting", nextAttempt: attempt.n + 1, maxAttempts: attempt.maxAttempts, inMs: attempt.retryInMs, after: attempt });
          }
        },
      });
    } catch (error) {
      result = { kind: "failed", outcomeUnknown: true, problem: null, message: error instanceof Error ? error.message : "Something went wrong.", status: null, attempts: 0, requestId: null };
    }
    intent.runsInFlight -= 1;
    settle(intent, result, cart.cartId);
    if (intent.runsInFlight === 0) settledRef.current();
  }

  function settle(intent: ActiveIntent, result: CheckoutResult, cartId: string) {
    if (activeRef.current !== intent || intent.ended) return;
    // Ended: the next Pay is a new intent with a new key. Outcome unknown: an
    // overlapping run may still get the answer; if none is left, the intent
    // is kept and the next Pay resends its key.
    if (endsIntent(result)) end(intent, cartId);
    else if (intent.runsInFlight > 0) return;
    else if (intent.stored) store.save((intent.stored = markUnresolved(intent.stored)));

    switch (result.kind) {
      case "paid":
        setPaid({ order: result.order, replayed: result.replayed, key: intent.key, attempts: logRef.current.length });
        setPhase({ kind: "paid", replayed: result.replayed });
        return;
      case "declined":
        setPhase({ kind: "declined", detail: result.problem.detail });
        return;
      case "failed":
        setPhase({ kind: "failed", detail: result.message, outcomeUnknown: result.outcomeUnknown });
        return;
    }
  }

  function end(intent: ActiveIntent, cartId: string) {
    intent.ended = true;
    if (intent.stored) store.remove(cartId);
  }

  /** Pay for `cart`: resend the unfinished intent of the same payload, or start a new one. */
  function pay(request: PayRequest) {
    const { cart, paymentMethod, strategy } = request;
    const active = activeRef.current;
    if (strategy.guardSubmit && active && active.runsInFlight > 0) return;

    // The guard is off (double-click demo) and this very intent is running: a second, overlapping run of it.
    if (active && !active.ended && active.runsInFlight > 0 && active.stored && samePayload(active.stored, { items: cart.items, paymentMethod })) {
      void run(active, request, false);
      return;
    }

    if (!strategy.sendIdempotencyKey) {
      const intent: ActiveIntent = { key: null, stored: null, ended: false, runsInFlight: 0, runsStarted: 0 };
      beginIntent(intent, []);
      void run(intent, request, false);
      return;
    }

    // The cart's unfinished intent if this is the same request, else a new
    // intent whose key is made now, before the first attempt, and saved (in
    // run) before that attempt is sent.
    const stored = intentForPay(store.load(cart.cartId), { cart, paymentMethod }, Date.now());
    const intent: ActiveIntent = { key: stored.idempotencyKey, stored, ended: false, runsInFlight: 0, runsStarted: nextRun(stored.attempts) - 1 };
    beginIntent(intent, stored.attempts);
    void run(intent, request, false);
  }

  /** A reload found an unfinished intent: show it, and resume it if it was cut short moments ago. */
  function resumeStoredIntent() {
    const stored = store.latest();
    if (!stored || activeRef.current) return;
    const attempts = markInterrupted(stored.attempts);
    const intent: ActiveIntent = { key: stored.idempotencyKey, stored: { ...stored, attempts }, ended: false, runsInFlight: 0, runsStarted: nextRun(attempts) - 1 };
    restoreRef.current(stored);
    beginIntent(intent, attempts);
    store.save(intent.stored!);
    if (shouldAutoResume(stored)) {
      const cart: Cart = { cartId: stored.cartId, items: stored.items };
      void run(intent, { cart, paymentMethod: stored.paymentMethod, strategy: DEFAULT_STRATEGY }, true);
    } else {
      setPhase({ kind: "failed", detail: "An earlier payment for this cart was not confirmed.", outcomeUnknown: true });
    }
  }

  // On page load: pick up this tab's unfinished intent, and resume it if a
  // reload cut its run short. Once per page load: the stored intent is the
  // only input. Deferred to a microtask so the first paint is the plain page
  // (the server rendered it without sessionStorage) and StrictMode's second
  // mount can cancel the first.
  useEffect(() => {
    let cancelled = false;
    queueMicrotask(() => {
      if (!cancelled) resumeStoredIntent();
    });
    return () => {
      cancelled = true;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps -- once per page load, by design
  }, []);

  /** Forget the finished order and start a fresh cart. */
  function reset() {
    activeRef.current = null;
    logRef.current = [];
    setLog([]);
    setKey(null);
    setKeyless(false);
    setPaid(null);
    setPhase({ kind: "idle" });
  }

  return { phase, paid, log, key, keyless, pay, reset };
}
