/**
 * The checkout's state machine, without React: one intent on screen at a
 * time, the runs of attempts that send it, and the snapshot the page renders
 * (components/shop/useCheckout.ts only mirrors it into React).
 *
 * The intent (key, cart, attempts) is written to the IntentStore before the
 * first attempt and after each one, and removed when the intent ends, so a
 * reload mid-payment resumes the same key. Which key a Pay sends and when an
 * intent ends are intent-decision.ts's rules; this module applies them to the
 * runs as they happen.
 */
import { isPaymentMethod, type Cart, type Order, type PaymentMethod } from "./api-types";
import {
  finishAttempt,
  interruptAttempt,
  markInterrupted,
  nextRun,
  startAttempt,
  type AttemptLog,
} from "./attempt-log";
import {
  awaitSettledOrder,
  createAuthenticationStore,
  type Authentication,
  type AuthenticationStore,
} from "./authentication";
import { submitCheckout, type AttemptInfo, type CheckoutResult } from "./checkout";
import type { CheckoutPhase } from "./checkout-phase";
import { DEFAULT_STRATEGY, type CheckoutStrategy } from "./demo";
import { endsIntent, intentForPay, markUnresolved } from "./intent-decision";
import {
  browserSessionStorage,
  samePayload,
  shouldAutoResume,
  startRun,
  type IntentStore,
  type StoredIntent,
} from "./intent-store";
import { RETRY_POLICY } from "./retry-policy";

export interface PaidOrder {
  order: Order;
  replayed: boolean;
  /** Null only for the lab's broken strategy. */
  key: string | null;
  attempts: number;
}

export interface PayRequest {
  cart: Cart;
  paymentMethod: PaymentMethod;
  strategy: CheckoutStrategy;
}

/** What the page shows; a new object on every change, so it can be compared by identity. */
export interface CheckoutSnapshot {
  readonly phase: CheckoutPhase;
  readonly paid: PaidOrder | null;
  readonly log: AttemptLog;
  /** The key of the intent on screen; null before the first Pay, and for the broken strategy. */
  readonly key: string | null;
  /** The intent on screen is the broken strategy's, sent without a key. */
  readonly keyless: boolean;
}

export const IDLE_SNAPSHOT: CheckoutSnapshot = Object.freeze<CheckoutSnapshot>({
  phase: { kind: "idle" },
  paid: null,
  log: [],
  key: null,
  keyless: false,
});

export interface IntentRunnerOptions {
  store: IntentStore;
  /** Sends one run of attempts; a fake in tests, so that fetch and timers can be faked underneath it. */
  submit?: typeof submitCheckout;
  now?: () => number;
  /** Where a 3-D Secure payment's order is remembered while the tab visits the bank. */
  authentications?: AuthenticationStore;
  /** Takes the tab to the bank's page (a fake in tests). */
  navigate?: (url: string) => void;
  /** Reads the order back after the bank (a fake in tests). */
  awaitOrder?: typeof awaitSettledOrder;
}

/** A cart to show again, with the payment method it was paid with. */
export type RestoredCart = Pick<StoredIntent, "cartId" | "items" | "paymentMethod">;

/** What the runner tells the page besides the snapshot. */
export interface IntentRunnerObserver {
  /** A reload found an unfinished intent, or the bank declined one: put its cart back on screen. */
  onRestore?: (cart: RestoredCart) => void;
  /** Every run of an intent has finished (the demo panel resets its faults). */
  onSettled?: () => void;
}

export interface IntentRunner {
  getSnapshot(): CheckoutSnapshot;
  /** Calls `listener` after every change of the snapshot; returns the unsubscribe. */
  subscribe(listener: () => void): () => void;
  /** Registers `observer` for the runner's events; returns the unsubscribe. */
  observe(observer: IntentRunnerObserver): () => void;
  /** Pay for the cart: resend the unfinished intent of the same payload, or start a new one. */
  pay(request: PayRequest): void;
  /** On page load: show this tab's unfinished intent, and resume it if it was cut short moments ago. */
  resumeStoredIntent(): void;
  /** Forget the finished order and show nothing. */
  reset(): void;
  /** The page is unloading: the browser now cancels the attempt in flight, which is the reload's doing, not the network's. */
  pageUnloading(): void;
}

/**
 * An intent as the runner tracks it. `stored` is null for the broken
 * strategy: without a key there is nothing to resume.
 */
interface Intent {
  /** Runs outlive the intent on screen (a new Pay, a reset): they find their intent by id and leave the screen alone once it changed. */
  readonly id: number;
  readonly key: string | null;
  readonly stored: StoredIntent | null;
  /** Paid or definitely failed: late answers of overlapping runs must not bring it back to life. */
  readonly ended: boolean;
  readonly runsInFlight: number;
  /** Runs started so far, across reloads: numbers each run's attempts in the log. */
  readonly runsStarted: number;
}

export function createIntentRunner({
  store,
  submit = submitCheckout,
  now = Date.now,
  authentications = createAuthenticationStore(browserSessionStorage()),
  navigate = (url) => window.location.assign(url),
  awaitOrder = awaitSettledOrder,
}: IntentRunnerOptions): IntentRunner {
  let snapshot = IDLE_SNAPSHOT;
  // The intent on screen, and any earlier one whose runs are still in flight.
  let intents: ReadonlyMap<number, Intent> = new Map();
  let activeId: number | null = null;
  let lastId = 0;
  // Set when the page starts to unload; cleared when an attempt starts after all (the unload was cancelled).
  let leaving = false;
  const listeners = new Set<() => void>();
  const observers = new Set<IntentRunnerObserver>();

  function publish(change: Partial<CheckoutSnapshot>) {
    snapshot = { ...snapshot, ...change };
    for (const listener of listeners) listener();
  }

  function intentById(id: number): Intent {
    const intent = intents.get(id);
    if (!intent) throw new Error(`intent ${id} is not tracked`);
    return intent;
  }

  function put(intent: Intent): Intent {
    intents = new Map(intents).set(intent.id, intent);
    return intent;
  }

  /** Stops tracking an intent that is neither on screen nor running. */
  function forgetIfIdle(id: number) {
    const intent = intents.get(id);
    if (!intent || intent.runsInFlight > 0 || id === activeId) return;
    const rest = new Map(intents);
    rest.delete(id);
    intents = rest;
  }

  function active(): Intent | null {
    return activeId === null ? null : intentById(activeId);
  }

  function begin(key: string | null, stored: StoredIntent | null, attempts: AttemptLog): number {
    const previous = activeId;
    lastId += 1;
    put({
      id: lastId,
      key,
      stored,
      ended: false,
      runsInFlight: 0,
      runsStarted: nextRun(attempts) - 1,
    });
    activeId = lastId;
    if (previous !== null) forgetIfIdle(previous);
    publish({ log: attempts, key, keyless: key === null, paid: null });
    return lastId;
  }

  /** A change to the log, saved with the intent; with the key's retention when an answer told it. */
  function updateLog(
    id: number,
    change: (log: AttemptLog) => AttemptLog,
    keyRetentionSeconds?: number,
  ) {
    if (activeId !== id) return;
    const log = change(snapshot.log);
    const intent = intentById(id);
    if (intent.stored && !intent.ended) {
      const stored = {
        ...intent.stored,
        attempts: log,
        ...(keyRetentionSeconds !== undefined && { keyRetentionSeconds }),
      };
      put({ ...intent, stored });
      store.save(stored);
    }
    publish({ log });
  }

  function isEnded(id: number): boolean {
    return intents.get(id)?.ended ?? true;
  }

  async function run(id: number, request: PayRequest, resumed: boolean) {
    const { cart, paymentMethod, strategy } = request;
    const before = intentById(id);
    const started = put({
      ...before,
      runsStarted: before.runsStarted + 1,
      runsInFlight: before.runsInFlight + 1,
      stored: before.stored && startRun(before.stored, now()),
    });
    const runNumber = started.runsStarted;
    if (started.stored) store.save(started.stored);
    publish({
      phase: { kind: "paying", attempt: 1, maxAttempts: RETRY_POLICY.maxAttempts, resumed },
    });

    let result: CheckoutResult;
    try {
      result = await submit({
        cart,
        paymentMethod,
        idempotencyKey: started.key,
        url: strategy.url,
        onAttemptStart: ({ n, maxAttempts }) => {
          // Still here, so whatever started an unload was cancelled.
          leaving = false;
          updateLog(id, (log) => startAttempt(log, runNumber, n));
          if (!isEnded(id))
            publish({ phase: { kind: "paying", attempt: n, maxAttempts, resumed } });
        },
        onAttempt: (attempt: AttemptInfo) => {
          if (attempt.failure === "network" && leaving) {
            updateLog(id, (log) => interruptAttempt(log, runNumber, attempt.n));
            return;
          }
          updateLog(
            id,
            (log) => finishAttempt(log, runNumber, attempt),
            attempt.keyRetentionSeconds,
          );
          if (attempt.retryInMs !== null && !isEnded(id)) {
            publish({
              phase: {
                kind: "waiting",
                nextAttempt: attempt.n + 1,
                maxAttempts: attempt.maxAttempts,
                inMs: attempt.retryInMs,
                after: attempt,
              },
            });
          }
        },
      });
    } catch (error) {
      result = {
        kind: "failed",
        outcomeUnknown: true,
        problem: null,
        message: error instanceof Error ? error.message : "Something went wrong.",
        status: null,
        attempts: 0,
        requestId: null,
      };
    }
    const current = intentById(id);
    const finished = put({ ...current, runsInFlight: current.runsInFlight - 1 });
    settle(id, result, cart.cartId);
    if (finished.runsInFlight === 0) {
      forgetIfIdle(id);
      // Off to the bank, the payment is not settled yet: it is on the way back (confirmAuthentication).
      if (result.kind !== "authenticate") for (const observer of observers) observer.onSettled?.();
    }
  }

  function settle(id: number, result: CheckoutResult, cartId: string) {
    const intent = intents.get(id);
    if (activeId !== id || !intent || intent.ended) return;
    // Ended: the next Pay is a new intent with a new key. Outcome unknown: an
    // overlapping run may still get the answer; if none is left, the intent
    // is kept and the next Pay resends its key.
    if (endsIntent(result)) {
      put({ ...intent, ended: true });
      if (intent.stored) store.remove(cartId);
    } else if (intent.runsInFlight > 0) {
      return;
    } else if (intent.stored) {
      const stored = markUnresolved(intent.stored);
      put({ ...intent, stored });
      store.save(stored);
    }

    switch (result.kind) {
      case "paid":
        publish({
          paid: {
            order: result.order,
            replayed: result.replayed,
            key: intent.key,
            attempts: snapshot.log.length,
          },
          phase: { kind: "paid", replayed: result.replayed },
        });
        return;
      case "authenticate":
        // The key's answer is final; what the payment comes to, the order will say on the way back.
        authentications.remember({
          orderId: result.order.id,
          cartId,
          key: intent.key,
          startedAt: now(),
          attempts: snapshot.log,
        });
        publish({ phase: { kind: "authenticating" } });
        navigate(result.url);
        return;
      case "declined":
        publish({ phase: { kind: "declined", detail: result.problem.detail } });
        return;
      case "failed":
        publish({
          phase: { kind: "failed", detail: result.message, outcomeUnknown: result.outcomeUnknown },
        });
        return;
    }
  }

  function pay(request: PayRequest) {
    const { cart, paymentMethod, strategy } = request;
    const current = active();
    if (strategy.guardSubmit && current && current.runsInFlight > 0) return;

    // The guard is off (double-click demo) and this very intent is running: a second, overlapping run of it.
    if (
      current &&
      !current.ended &&
      current.runsInFlight > 0 &&
      current.stored &&
      samePayload(current.stored, { items: cart.items, paymentMethod })
    ) {
      void run(current.id, request, false);
      return;
    }

    if (!strategy.sendIdempotencyKey) {
      void run(begin(null, null, []), request, false);
      return;
    }

    // The cart's unfinished intent if this is the same request, else a new
    // intent whose key is made now, before the first attempt, and saved (in
    // run) before that attempt is sent.
    const stored = intentForPay(store.load(cart.cartId), { cart, paymentMethod }, now());
    void run(begin(stored.idempotencyKey, stored, stored.attempts), request, false);
  }

  /** Back from the bank: the order, read until the provider settled it, is the outcome. */
  async function confirmAuthentication({ orderId, key, attempts }: Authentication) {
    const id = begin(key, null, attempts);
    publish({ phase: { kind: "confirming", looks: 0 } });
    const order = await awaitOrder({
      orderId,
      fetch: (url, init) => fetch(url, init),
      onLook: (looks) => {
        if (activeId === id) publish({ phase: { kind: "confirming", looks } });
      },
    });
    if (activeId !== id || !order) return;
    put({ ...intentById(id), ended: true });
    if (order.status === "paid") {
      publish({
        paid: { order, replayed: false, key, attempts: snapshot.log.length },
        phase: { kind: "paid", replayed: false },
      });
    } else {
      // The cart comes back, so paying again (another card, a new key) is one press away.
      const cart: RestoredCart = {
        cartId: order.cartId,
        items: order.items.map(({ sku, quantity }) => ({ sku, quantity })),
        paymentMethod: isPaymentMethod(order.payment?.paymentMethod)
          ? order.payment.paymentMethod
          : "pm_card_visa",
      };
      for (const observer of observers) observer.onRestore?.(cart);
      publish({
        phase: {
          kind: "declined",
          detail: "your bank did not confirm it (3-D Secure), and nothing was charged.",
        },
      });
    }
    for (const observer of observers) observer.onSettled?.();
  }

  function resumeStoredIntent() {
    const authentication = authentications.take();
    if (authentication && activeId === null) {
      void confirmAuthentication(authentication);
      return;
    }
    const stored = store.latest();
    if (!stored || activeId !== null) return;
    const attempts = markInterrupted(stored.attempts);
    const restored: StoredIntent = { ...stored, attempts };
    for (const observer of observers) observer.onRestore?.(stored);
    const id = begin(stored.idempotencyKey, restored, attempts);
    store.save(restored);
    if (shouldAutoResume(stored, now())) {
      const cart: Cart = { cartId: stored.cartId, items: stored.items };
      void run(id, { cart, paymentMethod: stored.paymentMethod, strategy: DEFAULT_STRATEGY }, true);
    } else {
      publish({
        phase: {
          kind: "failed",
          detail: "An earlier payment for this cart was not confirmed.",
          outcomeUnknown: true,
        },
      });
    }
  }

  function reset() {
    const previous = activeId;
    activeId = null;
    if (previous !== null) forgetIfIdle(previous);
    publish(IDLE_SNAPSHOT);
  }

  return {
    getSnapshot: () => snapshot,
    subscribe(listener) {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },
    observe(observer) {
      observers.add(observer);
      return () => {
        observers.delete(observer);
      };
    },
    pay,
    resumeStoredIntent,
    reset,
    pageUnloading() {
      leaving = true;
    },
  };
}
