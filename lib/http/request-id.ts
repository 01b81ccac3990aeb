import { randomUUID } from "node:crypto";
import { REQUEST_ID_HEADER } from "@/lib/http/headers";

// A balancer's request id: a UUID (HAProxy's uuid(), as the cluster's
// balancer sends) or a token like it. Anything else would let a caller write
// what it likes into our logs, so it is replaced, not trusted.
const BALANCER_REQUEST_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{7,127}$/;

/**
 * The attempt's X-Request-Id: the one the load balancer gave it, so the
 * balancer's log line and the app's join on it, or a new UUID when there is
 * none or it does not look like one.
 */
export function requestIdFor(request: Request): string {
  return requestIdFrom(request.headers.get(REQUEST_ID_HEADER));
}

/** The same, from the header's value as received (anything but a string when there is none). */
export function requestIdFrom(given: unknown): string {
  return typeof given === "string" && BALANCER_REQUEST_ID.test(given) ? given : randomUUID();
}
