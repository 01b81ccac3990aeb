import type { CrashObservation } from "@/lib/client/lab-crash";
import type { StormObservation } from "@/lib/client/lab-storm";

/**
 * What the browser saw of its lab runs (a storm's statuses and peak in
 * flight, a crash scenario's retries), kept in sessionStorage so the lab's
 * tables survive a reload. The server keeps the rest (orders, charges);
 * this is only what it cannot know.
 */
export type LabObservation = StormObservation | CrashObservation;

const STORAGE_KEY = "oncepay.lab.observations";
// A row per strategy and a short history: older ones can go.
const KEEP = 40;

export function loadObservations(storage: Storage | undefined): Map<string, LabObservation> {
  try {
    const value: unknown = JSON.parse(storage?.getItem(STORAGE_KEY) ?? "[]");
    if (!Array.isArray(value)) return new Map();
    return new Map(
      value.filter(isObservation).map((observation) => [observation.stormId, observation]),
    );
  } catch {
    return new Map();
  }
}

export function saveObservation(storage: Storage | undefined, observation: LabObservation): void {
  const kept = [...loadObservations(storage).values()].filter(
    (old) => old.stormId !== observation.stormId,
  );
  try {
    storage?.setItem(STORAGE_KEY, JSON.stringify([...kept.slice(-(KEEP - 1)), observation]));
  } catch {
    // Without storage the observation lasts until the page reloads.
  }
}

function isObservation(value: unknown): value is LabObservation {
  if (typeof value !== "object" || value === null) return false;
  const { stormId, sent, statuses, attempts } = value as Record<string, unknown>;
  return (
    typeof stormId === "string" &&
    ((typeof sent === "number" && Array.isArray(statuses)) || Array.isArray(attempts))
  );
}

export function isStormObservation(
  observation: LabObservation | undefined,
): observation is StormObservation {
  return observation !== undefined && "statuses" in observation;
}

export function isCrashObservation(
  observation: LabObservation | undefined,
): observation is CrashObservation {
  return observation !== undefined && "attempts" in observation;
}
