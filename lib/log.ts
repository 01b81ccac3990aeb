/**
 * One JSON object per line on stdout, through pino: an `event` name, the
 * fields given, and the request context (lib/observability/request-context.ts)
 * of whatever request or recovery the line was written for, so the lines of
 * one attempt, and of every attempt of one key, can be joined across
 * instances. pino writes synchronously to stdout by default, so the lines
 * before a crash are not lost with it.
 */
import pino from "pino";
import { configuredLogLevel } from "@/lib/env";
import { currentContext } from "@/lib/observability/request-context";

type Fields = Record<string, unknown>;

let logger: pino.Logger | undefined;

function pinoLogger(): pino.Logger {
  logger ??= pino({
    level: configuredLogLevel(),
    messageKey: "event",
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    mixin: () => ({ ...currentContext() }),
  });
  return logger;
}

export const log = {
  debug: (event: string, fields: Fields = {}) => pinoLogger().debug(fields, event),
  info: (event: string, fields: Fields = {}) => pinoLogger().info(fields, event),
  warn: (event: string, fields: Fields = {}) => pinoLogger().warn(fields, event),
  error: (event: string, fields: Fields = {}) => pinoLogger().error(fields, event),
};

export function errorFields(error: unknown): Fields {
  if (error instanceof Error)
    return { error: error.message, errorName: error.name, stack: error.stack, ...causesOf(error) };
  return { error: String(error) };
}

// What lies under an error, where the address and the socket's own words
// usually are: its `cause` chain, and the Stripe SDK's `detail` (the
// network error under its "error with our connection to Stripe").
function causesOf(error: Error): Fields {
  const causes: string[] = [];
  for (let next = underlying(error); next !== undefined && causes.length < 5;) {
    causes.push(next instanceof Error ? `${next.name}: ${next.message}` : String(next));
    next = next instanceof Error ? underlying(next) : undefined;
  }
  return causes.length > 0 ? { causes } : {};
}

function underlying(error: Error): unknown {
  if (error.cause !== undefined) return error.cause;
  const detail = (error as { detail?: unknown }).detail;
  return detail instanceof Error ? detail : undefined;
}
