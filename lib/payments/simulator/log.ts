import { simulatorLogLevel, type SimulatorLogLevel } from "@/lib/payments/simulator/env";

/**
 * The simulator's own logger, so that it needs nothing of the app and can be
 * lifted out whole. Its lines have the shape of OncePay's (lib/log.ts: one
 * JSON object with time, level and event), so one pipeline reads both.
 */
type Level = Exclude<SimulatorLogLevel, "silent">;

const SEVERITY: Record<SimulatorLogLevel, number> = {
  debug: 10,
  info: 20,
  warn: 30,
  error: 40,
  silent: 100,
};

export function logEvent(level: Level, event: string, fields: Record<string, unknown> = {}): void {
  // Read on each event, as the app does, so a test may change it at run time.
  if (SEVERITY[level] < SEVERITY[simulatorLogLevel()]) return;
  const line = JSON.stringify({ time: new Date().toISOString(), level, event, ...fields });
  const toStderr = level === "warn" || level === "error";
  (toStderr ? console.error : console.log)(line);
}

/** What an error says, for a log line (a thrown non-Error is shown as a string). */
export function describeError(error: unknown): Record<string, unknown> {
  return error instanceof Error
    ? { error: error.message, errorName: error.name, stack: error.stack }
    : { error: String(error) };
}
