import type { StormObservation } from "@/lib/client/lab-storm";

/**
 * What the browser saw of its storms (statuses, peak in flight), kept in
 * sessionStorage so the lab's table survives a reload. The server keeps
 * the rest (orders, charges); this is only what it cannot know.
 */
const STORAGE_KEY = "oncepay.lab.observations";
// A row per strategy and a short history: older ones can go.
const KEEP = 40;

export function loadObservations(storage: Storage | undefined): Map<string, StormObservation> {
  try {
    const value: unknown = JSON.parse(storage?.getItem(STORAGE_KEY) ?? "[]");
    if (!Array.isArray(value)) return new Map();
    return new Map(value.filter(isObservation).map((observation) => [observation.stormId, observation]));
  } catch {
    return new Map();
  }
}

export function saveObservation(storage: Storage | undefined, observation: StormObservation): void {
  const kept = [...loadObservations(storage).values()].filter((old) => old.stormId !== observation.stormId);
  try {
    storage?.setItem(STORAGE_KEY, JSON.stringify([...kept.slice(-(KEEP - 1)), observation]));
  } catch {
    // Without storage the observation lasts until the page reloads.
  }
}

function isObservation(value: unknown): value is StormObservation {
  if (typeof value !== "object" || value === null) return false;
  const { stormId, sent, statuses } = value as Record<string, unknown>;
  return typeof stormId === "string" && typeof sent === "number" && Array.isArray(statuses);
}
