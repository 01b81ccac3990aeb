import { createHash } from "node:crypto";

/**
 * Where a request that waits for its key's first attempt (`Prefer: wait`)
 * hears that the key changed: completed, released, or its lease handed
 * back. A waiter subscribes before its claim reads the key's row, so a
 * change committed after that read is never missed; a wake only says "look
 * again", and the engine claims again to see what it is.
 *
 * This instance's own changes are told at once (`publish`); another
 * instance's come from PostgreSQL (`listenForKeyChanges`, pg.ts), whose
 * commits of a completion, a release or a lease handed back NOTIFY the
 * key's topic. Without a listener (the embedded database, one process),
 * only this instance's changes wake its waiters, which is all there are.
 */
export interface Subscription {
  /** "changed": look again; "unheard": the listener was lost, so nothing more will be heard. */
  readonly heard: Promise<"changed" | "unheard">;
  close(): void;
}

/**
 * The topic of one key, as the statements NOTIFY it: md5 over the scope and
 * the key, so a payload has a fixed size whatever the key. Two keys sharing
 * a topic would only wake each other's waiters to look again.
 */
export function keyTopic(scope: string, key: string): string {
  // A newline between them: no key has one (printable ASCII only).
  return createHash("md5").update(`${scope}\n${key}`).digest("hex");
}

/** The channel the key statements NOTIFY, and a listener LISTENs to. */
export const KEY_CHANGED_CHANNEL = "idempotency_key_changed";

/**
 * The subscriptions of one instance, woken by `publish` (its own changes)
 * and by `hear` (a listener's); `lose` answers every open one "unheard".
 */
export class KeyWaiters {
  private readonly byTopic = new Map<string, Set<(heard: "changed" | "unheard") => void>>();
  private count = 0;
  /** Whether a wait can be heard now: false while a listener is down. */
  listening = true;

  /** Subscriptions open now, across keys: what a cap on waiters counts. */
  get subscribed(): number {
    return this.count;
  }

  /** Starts listening for the key's changes; `heard` settles on the first. */
  subscribe(topic: string): Subscription {
    let settle!: (heard: "changed" | "unheard") => void;
    const heard = new Promise<"changed" | "unheard">((resolve) => (settle = resolve));
    let open = true;
    const close = () => {
      if (!open) return;
      open = false;
      this.count--;
      const waiters = this.byTopic.get(topic)!;
      waiters.delete(wake);
      if (waiters.size === 0) this.byTopic.delete(topic);
    };
    const wake = (why: "changed" | "unheard") => {
      close();
      settle(why);
    };
    let waiters = this.byTopic.get(topic);
    if (!waiters) this.byTopic.set(topic, (waiters = new Set()));
    waiters.add(wake);
    this.count++;
    if (!this.listening) wake("unheard");
    return { heard, close };
  }

  /** A change of the key, this instance's own or a listener's: its waiters look again. */
  publish(topic: string): void {
    for (const wake of [...(this.byTopic.get(topic) ?? [])]) wake("changed");
  }

  /** The listener is gone: every waiter is answered now, none is left hanging. */
  lose(): void {
    this.listening = false;
    for (const waiters of [...this.byTopic.values()])
      for (const wake of [...waiters]) wake("unheard");
  }

  /** The listener is back (LISTEN ran again). */
  regain(): void {
    this.listening = true;
  }
}
