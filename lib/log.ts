/**
 * One JSON line per event on stdout/stderr: easy to read in a terminal, easy
 * to grep, and structured enough for a log pipeline.
 */
import { configuredLogLevel } from "@/lib/env";

type Level = "debug" | "info" | "warn" | "error";

const LEVEL_ORDER: Record<Level | "silent", number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

function threshold(): number {
  return LEVEL_ORDER[configuredLogLevel()];
}

function write(level: Level, event: string, fields: Record<string, unknown>) {
  if (LEVEL_ORDER[level] < threshold()) return;
  const line = JSON.stringify({ time: new Date().toISOString(), level, event, ...fields });
  if (level === "error" || level === "warn") console.error(line);
  else console.log(line);
}

export const log = {
  debug: (event: string, fields: Record<string, unknown> = {}) => write("debug", event, fields),
  info: (event: string, fields: Record<string, unknown> = {}) => write("info", event, fields),
  warn: (event: string, fields: Record<string, unknown> = {}) => write("warn", event, fields),
  error: (event: string, fields: Record<string, unknown> = {}) => write("error", event, fields),
};

export function errorFields(error: unknown): Record<string, unknown> {
  if (error instanceof Error) return { error: error.message, errorName: error.name, stack: error.stack };
  return { error: String(error) };
}
