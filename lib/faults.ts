import { serverEnv } from "@/lib/env";

/**
 * Failure injection for tests and demos. When the server runs with
 * DEMO_FAULTS=on, a request may carry `OncePay-Fault: <point>` and the server
 * fails on purpose at that point, the way a crash or a broken dependency
 * would. The header is not part of the request's fingerprint, so a retry
 * without it is the same request.
 */
export const FAULT_HEADER = "OncePay-Fault";

export const FAULT_POINTS = [
  // Before the charge: the key must be released, and a retry runs afresh.
  "before-charge",
  // After the charge, before the order is written: the key stays in flight
  // until its lease expires; the retry that takes it over finishes the order.
  "after-charge",
] as const;

export type FaultPoint = (typeof FAULT_POINTS)[number];

export class InjectedFault extends Error {
  constructor(point: FaultPoint) {
    super(`Injected fault at ${point}`);
    this.name = "InjectedFault";
  }
}

export function requestedFault(request: Request): FaultPoint | undefined {
  const value = request.headers.get(FAULT_HEADER);
  if (!value || serverEnv().DEMO_FAULTS !== "on") return undefined;
  return (FAULT_POINTS as readonly string[]).includes(value) ? (value as FaultPoint) : undefined;
}

/** Throws when `point` is the fault the request asked for. */
export function failIfRequested(requested: FaultPoint | undefined, point: FaultPoint): void {
  if (requested === point) throw new InjectedFault(point);
}
