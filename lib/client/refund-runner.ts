/**
 * One order's Refund control, without React: the refund intent on screen,
 * its run of attempts, and the snapshot the control renders
 * (components/ledger/useRefund.ts only mirrors it into React).
 *
 * A press starts a run only when none is in flight: the second click of a
 * double-click, or an impatient third, is ignored, not sent as another
 * refund. Which key a press sends is refund-intent.ts's rule (the
 * checkout's); the intent is saved before its first attempt and removed
 * once its outcome is known, so a reload mid-refund resumes the same key.
 */
import { endsIntent } from "./intent-decision";
import { shouldAutoResume } from "./intent-store";
import { intentForRefund, type RefundIntent, type RefundIntentStore } from "./refund-intent";
import { submitRefund, type Refund, type RefundAttempt, type RefundResult } from "./refund";
import { RETRY_POLICY } from "./retry-policy";

export type RefundPhase =
  | { kind: "idle" }
  /** An attempt is on the wire; attempt > 1 is a retry. `resumed`: this run picked up an intent after a reload. */
  | { kind: "sending"; attempt: number; maxAttempts: number; resumed: boolean }
  /** Between attempts: the wait before the next one, and why. */
  | {
      kind: "waiting";
      nextAttempt: number;
      maxAttempts: number;
      inMs: number;
      after: RefundAttempt;
    }
  | { kind: "refunded"; refund: Refund; replayed: boolean }
  /** The server refused this request for good (400, 404, 422, …): its detail, as it came. */
  | { kind: "refused"; detail: string; status: number }
  /** Outcome unknown: the refund may have been made; pressing again resends the same key. */
  | { kind: "unconfirmed"; detail: string };

export interface RefundSnapshot {
  readonly phase: RefundPhase;
  /** The key of the intent on screen; null before the first press. */
  readonly key: string | null;
  /** The amount of the unfinished intent (null: all that was left), for the control to offer again. */
  readonly unfinishedAmount: number | null | undefined;
}

export const IDLE_REFUND: RefundSnapshot = Object.freeze<RefundSnapshot>({
  phase: { kind: "idle" },
  key: null,
  unfinishedAmount: undefined,
});

export interface RefundRunnerOptions {
  orderId: string;
  store: RefundIntentStore;
  /** Sends one run of attempts; a fake in tests. */
  submit?: typeof submitRefund;
  now?: () => number;
  newKey?: () => string;
}

export interface RefundRunner {
  getSnapshot(): RefundSnapshot;
  subscribe(listener: () => void): () => void;
  /** A refund was made (or replayed): the page shows the records again. */
  onRefunded(listener: (refund: Refund) => void): () => void;
  /** A press of Refund: false, and nothing sent, while a run is in flight. */
  refund(amount: number | null): boolean;
  /** On page load: show the order's unfinished intent, and resume it if a reload cut its run short moments ago. */
  resumeStoredIntent(): void;
}

export function createRefundRunner({
  orderId,
  store,
  submit = submitRefund,
  now = Date.now,
  newKey,
}: RefundRunnerOptions): RefundRunner {
  let snapshot = IDLE_REFUND;
  let running = false;
  // The intent whose outcome is unknown, if any: the next press of the same amount resends it.
  let unfinished: RefundIntent | null = null;
  const listeners = new Set<() => void>();
  const refundedListeners = new Set<(refund: Refund) => void>();

  function publish(change: Partial<RefundSnapshot>) {
    snapshot = { ...snapshot, ...change };
    for (const listener of listeners) listener();
  }

  async function run(intent: RefundIntent, resumed: boolean) {
    running = true;
    store.save(intent);
    const maxAttempts = RETRY_POLICY.maxAttempts;
    publish({
      key: intent.idempotencyKey,
      phase: { kind: "sending", attempt: 1, maxAttempts, resumed },
    });
    let result: RefundResult;
    try {
      result = await submit({
        orderId,
        amount: intent.amount,
        idempotencyKey: intent.idempotencyKey,
        onAttemptStart: ({ n }) =>
          publish({ phase: { kind: "sending", attempt: n, maxAttempts, resumed } }),
        onAttempt: (attempt) => {
          if (attempt.keyRetentionSeconds !== undefined) {
            intent = { ...intent, keyRetentionSeconds: attempt.keyRetentionSeconds };
            store.save(intent);
          }
          if (attempt.retryInMs !== null)
            publish({
              phase: {
                kind: "waiting",
                nextAttempt: attempt.n + 1,
                maxAttempts: attempt.maxAttempts,
                inMs: attempt.retryInMs,
                after: attempt,
              },
            });
        },
      });
    } catch (error) {
      result = {
        kind: "failed",
        outcomeUnknown: true,
        message: error instanceof Error ? error.message : "Something went wrong.",
        attempts: 0,
      };
    }
    running = false;
    settle(intent, result);
  }

  function settle(intent: RefundIntent, result: RefundResult) {
    if (endsIntent(result)) {
      unfinished = null;
      store.remove(orderId);
    } else {
      unfinished = { ...intent, state: "unresolved" };
      store.save(unfinished);
    }
    const unfinishedAmount = unfinished ? unfinished.amount : undefined;
    switch (result.kind) {
      case "refunded":
        publish({
          unfinishedAmount,
          phase: { kind: "refunded", refund: result.refund, replayed: result.replayed },
        });
        for (const listener of refundedListeners) listener(result.refund);
        return;
      case "refused":
        publish({
          unfinishedAmount,
          phase: { kind: "refused", detail: result.problem.detail, status: result.problem.status },
        });
        return;
      case "failed":
        publish({ unfinishedAmount, phase: { kind: "unconfirmed", detail: result.message } });
        return;
    }
  }

  return {
    getSnapshot: () => snapshot,
    subscribe(listener) {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },
    onRefunded(listener) {
      refundedListeners.add(listener);
      return () => {
        refundedListeners.delete(listener);
      };
    },
    refund(amount) {
      if (running) return false;
      // The unfinished intent of this very request, else a new one whose key is made now.
      const intent = intentForRefund(unfinished, { orderId, amount }, now(), newKey);
      unfinished = intent;
      void run(intent, false);
      return true;
    },
    resumeStoredIntent() {
      if (running || snapshot !== IDLE_REFUND) return;
      const stored = store.load(orderId);
      if (!stored) return;
      unfinished = stored;
      if (shouldAutoResume(stored, now())) {
        void run({ ...stored, lastRunAt: now() }, true);
        return;
      }
      publish({
        key: stored.idempotencyKey,
        unfinishedAmount: stored.amount,
        phase: {
          kind: "unconfirmed",
          detail: "An earlier refund of this order was not confirmed.",
        },
      });
    },
  };
}
