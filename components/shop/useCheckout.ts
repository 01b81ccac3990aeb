"use client";

import { useEffect, useState, useSyncExternalStore } from "react";
import { createIntentStore } from "@/lib/client/intent-store";
import { IDLE_SNAPSHOT, createIntentRunner, type RestoredCart } from "@/lib/client/intent-runner";

interface UseCheckoutOptions {
  /** A reload found an unfinished intent, or the bank declined one: put its cart back on screen. */
  onRestore: (intent: RestoredCart) => void;
  /** Every run of the intent has finished (the demo panel resets its faults). */
  onSettled: () => void;
}

// The server renders without sessionStorage, so its page is always the idle one.
const serverSnapshot = () => IDLE_SNAPSHOT;

/**
 * The checkout for React: one intent runner (lib/client/intent-runner.ts) per
 * page, its snapshot as render state, and the browser events it needs (the
 * page unloading, the page loading with an unfinished intent in
 * sessionStorage).
 */
export function useCheckout({ onRestore, onSettled }: UseCheckoutOptions) {
  const [runner] = useState(() => createIntentRunner({ store: createIntentStore() }));
  const { phase, paid, log, key, keyless } = useSyncExternalStore(
    runner.subscribe,
    runner.getSnapshot,
    serverSnapshot,
  );

  // Declared before the resume below, so a restore on page load already finds it.
  useEffect(() => runner.observe({ onRestore, onSettled }), [runner, onRestore, onSettled]);

  useEffect(() => {
    const leaving = () => runner.pageUnloading();
    window.addEventListener("beforeunload", leaving);
    window.addEventListener("pagehide", leaving);
    return () => {
      window.removeEventListener("beforeunload", leaving);
      window.removeEventListener("pagehide", leaving);
    };
  }, [runner]);

  // Back from the bank's 3-D Secure page: its parameters (the payment's
  // client secret among them) leave the address bar, so a reload or a
  // shared link does not carry them. The order is what tells the outcome.
  useEffect(() => {
    const url = new URL(window.location.href);
    if (url.searchParams.has("payment_intent")) window.history.replaceState(null, "", url.pathname);
  }, []);

  // On page load: pick up this tab's unfinished intent, and resume it if a
  // reload cut its run short. Once per page load: the stored intent is the
  // only input, and the runner is made once. Deferred to a microtask so the
  // first paint is the plain page (the server rendered it without
  // sessionStorage) and StrictMode's second mount can cancel the first.
  useEffect(() => {
    let cancelled = false;
    queueMicrotask(() => {
      if (!cancelled) runner.resumeStoredIntent();
    });
    return () => {
      cancelled = true;
    };
  }, [runner]);

  return { phase, paid, log, key, keyless, pay: runner.pay, reset: runner.reset };
}
