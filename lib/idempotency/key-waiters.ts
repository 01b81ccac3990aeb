import { KeyWaiters } from "@oncepay/idempotency";

const globalForWaiters = globalThis as typeof globalThis & { oncepayKeyWaiters?: KeyWaiters };

/**
 * This process's requests waiting for their key's first attempt: one set
 * for the whole process. Next.js loads the route handlers (where requests
 * wait) and the instrumentation (whose background work runs the listener
 * and the recovery worker) as separate module graphs, each with its own
 * services; waiters kept per graph would never hear the listener.
 */
export function processKeyWaiters(): KeyWaiters {
  globalForWaiters.oncepayKeyWaiters ??= new KeyWaiters();
  return globalForWaiters.oncepayKeyWaiters;
}
