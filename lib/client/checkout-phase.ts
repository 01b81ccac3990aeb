/**
 * What the checkout is doing right now, as the status region shows it. Kept
 * in lib/client, not next to the component, because the intent runner
 * produces it and a lib module must not depend on components.
 */
import type { AttemptInfo } from "./checkout";

export type CheckoutPhase =
  | { kind: "idle" }
  /** An attempt is on the wire; attempt > 1 is a retry. `resumed`: this run picked up an intent after a reload. */
  | { kind: "paying"; attempt: number; maxAttempts: number; resumed: boolean }
  /** Between attempts: the wait before the next one, and why. */
  | { kind: "waiting"; nextAttempt: number; maxAttempts: number; inMs: number; after: AttemptInfo }
  | { kind: "paid"; replayed: boolean }
  /** The card's bank asks the shopper to authenticate: the tab is on its way to the bank's page. */
  | { kind: "authenticating" }
  /** Back from the bank: the order is read until the provider's word settles it; `looks` so far. */
  | { kind: "confirming"; looks: number }
  | { kind: "declined"; detail: string }
  /** outcomeUnknown: the client gave up, the payment may have gone through; paying again resends the same key. */
  | { kind: "failed"; detail: string; outcomeUnknown: boolean };
