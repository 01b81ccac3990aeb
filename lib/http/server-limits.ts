import { readFileSync } from "node:fs";
import type { Server, ServerOptions } from "node:http";

/**
 * The bounds every HTTP server OncePay runs keeps (the shop, the payment
 * simulator, the lab's DynamoDB), so that a flood of connections is shed
 * rather than fatal. Left to its defaults, Node waits 60 s for a request's
 * headers and 5 min for the whole request, checks each only every 30 s,
 * and takes every connection it is offered: a few thousand sockets that
 * each trickle a byte every few seconds use up the process's file
 * descriptors, and then its database connections, its calls to the payment
 * provider and its own checks fail with EMFILE.
 *
 * - A request's headers must arrive within 10 s and the whole request
 *   within 30 s (a checkout's body is at most 64 KiB); the time a request
 *   takes to be answered is not bounded here. Node checks every second.
 * - At most three quarters of the process's descriptors go to connections:
 *   one over the bound is closed as soon as it is accepted, and the rest
 *   stay for the database, the payment provider and files.
 */
export const HEADERS_TIMEOUT_MS = 10_000;
export const REQUEST_TIMEOUT_MS = 30_000;

/** For `http.createServer(SERVER_TIMEOUTS, handler)`. */
export const SERVER_TIMEOUTS = {
  headersTimeout: HEADERS_TIMEOUT_MS,
  requestTimeout: REQUEST_TIMEOUT_MS,
  connectionsCheckingInterval: 1_000,
} satisfies ServerOptions;

/** For a server made elsewhere (dynalite's): the bounds that can be set once it exists. */
export function boundServer<T extends Server>(server: T, descriptors = openFilesLimit()): T {
  server.headersTimeout = HEADERS_TIMEOUT_MS;
  server.requestTimeout = REQUEST_TIMEOUT_MS;
  server.maxConnections = connectionBound(descriptors);
  return server;
}

export function connectionBound(descriptors: number): number {
  return Math.max(1, Math.floor(descriptors * 0.75));
}

/**
 * This process's limit on open files (the soft one, `ulimit -n`), from
 * /proc/self/limits; unbounded where there is no such file.
 */
export function openFilesLimit(limits = readLimits()): number {
  const line = limits.split("\n").find((entry) => entry.startsWith("Max open files"));
  const soft = line?.slice("Max open files".length).trim().split(/\s+/)[0];
  const value = Number(soft);
  return soft && Number.isInteger(value) && value > 0 ? value : Infinity;
}

function readLimits(): string {
  try {
    return readFileSync("/proc/self/limits", "utf8");
  } catch {
    return "";
  }
}
