"use client";

import { useEffect, useState, useSyncExternalStore } from "react";
import { createRefundIntentStore } from "@/lib/client/refund-intent";
import { createRefundRunner, IDLE_REFUND } from "@/lib/client/refund-runner";

// The server renders without sessionStorage, so its control is always the idle one.
const serverSnapshot = () => IDLE_REFUND;

/**
 * One order's refund for React: a refund runner (lib/client/refund-runner.ts)
 * per control, its snapshot as render state, and the order's unfinished
 * intent picked up when the page loads. `onRefunded` runs after each refund
 * the server confirmed (the page shows the records again).
 */
export function useRefund(orderId: string, onRefunded: () => void) {
  const [runner] = useState(() =>
    createRefundRunner({ orderId, store: createRefundIntentStore() }),
  );
  const snapshot = useSyncExternalStore(runner.subscribe, runner.getSnapshot, serverSnapshot);

  useEffect(() => runner.onRefunded(onRefunded), [runner, onRefunded]);

  // On page load: this tab's unfinished refund of the order, resumed if a
  // reload cut it short moments ago. Deferred to a microtask, so the first
  // paint is the server's and StrictMode's second mount can cancel the first.
  useEffect(() => {
    let cancelled = false;
    queueMicrotask(() => {
      if (!cancelled) runner.resumeStoredIntent();
    });
    return () => {
      cancelled = true;
    };
  }, [runner]);

  return { ...snapshot, refund: runner.refund };
}
