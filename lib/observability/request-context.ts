import { AsyncLocalStorage } from "node:async_hooks";

/**
 * What every log line written on behalf of one request (or one recovery of a
 * key) carries, so its lines can be joined without passing ids around: one
 * attempt's lines by `requestId`, all attempts of one key by `keyId` or
 * `providerKey`, whichever instance served them.
 */
export interface RequestContext {
  /** One per attempt: the balancer's X-Request-Id, or one made here. */
  requestId?: string;
  accountId?: string;
  /** The client's Idempotency-Key, once it parsed. */
  idempotencyKey?: string;
  /** The key row: every attempt, takeover and recovery of one request shares it. */
  keyId?: string;
  /** What the payment provider knows the charge by (oncepay:<account>:<hash of the Idempotency-Key and fingerprint>). */
  providerKey?: string;
  /** A provider event being received (evt_…): its duplicates share it. */
  eventId?: string;
}

const storage = new AsyncLocalStorage<RequestContext>();

/** Runs work with its own context; whatever it awaits sees the same one. */
export function runWithContext<T>(context: RequestContext, work: () => T): T {
  return storage.run({ ...context }, work);
}

/** Adds what became known mid-request (the account, the key row) to the current context, if there is one. */
export function addToContext(fields: RequestContext): void {
  const current = storage.getStore();
  if (current) Object.assign(current, fields);
}

export function currentContext(): RequestContext | undefined {
  return storage.getStore();
}
