import { serverEnv } from "@/lib/env";
import { FAULT_HEADER } from "@/lib/http/headers";
import { log } from "@/lib/log";

/**
 * Failure injection for tests and demos. When the server runs with
 * DEMO_FAULTS=on, a request may carry `OncePay-Fault: <name>` and the server
 * fails on purpose at that site: it throws (a broken dependency) or, only
 * when CRASH_FAULTS=on as well, kills its own process with SIGKILL (a crash:
 * no finally blocks, no cleanup, open transactions rolled back by the
 * database). A crash stops the server for everyone, so it has its own switch,
 * which only the test harness sets; asked for without it, it is ignored like
 * any unknown name. The header is not part of the request's fingerprint, so a
 * retry without it is the same request.
 */
/**
 * Where a checkout or a refund can be made to fail, in the order it reaches
 * them (a refund's "charge" is its call to the provider, its "order" the
 * refund's row).
 */
export type FaultSite =
  | "after-claim" // the key is claimed and committed; nothing charged (refunded) yet
  | "after-charge" // the provider charged (refunded); no order (refund) written yet
  | "before-commit" // the provider answered; the transaction that writes the order (refund), keeps the answer with the key and completes it rolls back
  | "after-commit"; // order (refund) and completed key committed; no response sent yet

const FAULTS = {
  // Throw: the key must be released, and a retry runs afresh.
  "before-charge": { site: "after-claim", crash: false },
  // Throw: the key stays in flight until its lease expires; the retry (or the
  // recovery worker) that takes it over finishes the order.
  "after-charge": { site: "after-charge", crash: false },
  // Throw just before the order and the completed key are written (one
  // statement, so there is no later point before the commit): the provider's
  // answer was to commit with them, so the key stays in flight at
  // `payment_started`, and the resume asks the provider again under the
  // same key.
  "before-commit": { site: "before-commit", crash: false },
  // Crash at each dangerous point (the crash matrix).
  "crash-after-claim": { site: "after-claim", crash: true },
  "crash-after-charge": { site: "after-charge", crash: true },
  "crash-before-commit": { site: "before-commit", crash: true },
  "crash-after-commit": { site: "after-commit", crash: true },
} as const satisfies Record<string, { site: FaultSite; crash: boolean }>;

export type FaultName = keyof typeof FAULTS;
export const FAULT_NAMES = Object.keys(FAULTS) as FaultName[];

export class InjectedFault extends Error {
  constructor(name: FaultName) {
    super(`Injected fault ${name}`);
    this.name = "InjectedFault";
  }
}

export function requestedFault(request: Request): FaultName | undefined {
  const value = request.headers.get(FAULT_HEADER);
  const env = serverEnv();
  if (!value || env.DEMO_FAULTS !== "on" || !isFaultName(value)) return undefined;
  if (FAULTS[value].crash && env.CRASH_FAULTS !== "on") return undefined;
  return value;
}

function isFaultName(value: string): value is FaultName {
  return (FAULT_NAMES as string[]).includes(value);
}

/** Fails here when the request asked for a fault at this site. */
export function injectFault(requested: FaultName | undefined, site: FaultSite): void {
  if (!requested || FAULTS[requested].site !== site) return;
  if (FAULTS[requested].crash) {
    log.warn("fault.crash", { fault: requested, site });
    process.kill(process.pid, "SIGKILL");
  }
  throw new InjectedFault(requested);
}
