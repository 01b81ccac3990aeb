/**
 * A retry schedule as written in SIMULATOR_WEBHOOK_RETRIES: waits such as
 * `500ms,2s,1m,1h`, comma-separated, in milliseconds; undefined when any
 * part is not one (an empty list is allowed: a single attempt, no retries).
 */
const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 } as const;
const MAX_STEPS = 20;
const MAX_WAIT_MS = 24 * 3_600_000;

export function parseRetrySchedule(text: string): number[] | undefined {
  const parts = text
    .split(",")
    .map((part) => part.trim())
    .filter((part) => part !== "");
  if (parts.length > MAX_STEPS) return undefined;
  const waits: number[] = [];
  for (const part of parts) {
    const match = /^(\d{1,9})(ms|s|m|h)$/.exec(part);
    if (!match) return undefined;
    const wait = Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
    if (wait > MAX_WAIT_MS) return undefined;
    waits.push(wait);
  }
  return waits;
}
