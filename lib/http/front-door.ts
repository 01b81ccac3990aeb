import type { IncomingHttpHeaders } from "node:http";
import { REQUEST_ID_HEADER } from "@/lib/http/headers";
import { PROBLEM_CONTENT_TYPE, problemType } from "@/lib/http/problem-type";
import { requestIdFrom } from "@/lib/http/request-id";
import { SECURITY_HEADERS } from "@/lib/http/security-headers";

/**
 * What OncePay's own HTTP server (scripts/serve.mts) does with a request
 * before Next.js sees it. Two jobs, both about what a client can write:
 *
 * - Refuse what Next.js would answer with a 500 before any of our code runs
 *   (a path that does not percent-decode, a method its router cannot take):
 *   a 400 or 405 problem+json here, so nothing a client sends is a 5xx.
 * - Say who the client is. Next.js records the peer in X-Forwarded-For only
 *   when the request has none, so a caller that sends its own header picks
 *   its address. Here the peer is always appended, as every proxy does.
 *
 * Imports nothing of the app beyond header, problem and request-id helpers: it runs
 * for every request, pages and static files included.
 */

/** The methods Next.js's router serves; it throws on any other (TRACE, PROPFIND, …). */
export const SERVED_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];

export interface Refusal {
  status: 400 | 405;
  headers: Record<string, string>;
  body: string;
}

/** The answer for a request Next.js cannot route, or undefined to pass it on. */
export function refusalFor(request: {
  method: string;
  target: string;
  headers: IncomingHttpHeaders;
}): Refusal | undefined {
  const { method, target, headers } = request;
  if (!SERVED_METHODS.includes(method))
    return refusal(
      headers,
      405,
      "method-not-allowed",
      "Method not allowed",
      `OncePay does not answer ${method}. Its endpoints answer at most ${SERVED_METHODS.join(", ")}.`,
      { Allow: SERVED_METHODS.join(", ") },
    );
  if (!decodes(target))
    return refusal(
      headers,
      400,
      "malformed-path",
      "Malformed path",
      "The path has a percent-encoding that is not UTF-8 (such as %ZZ or a cut-off sequence).",
    );
  return undefined;
}

/**
 * The answer to bytes Node's HTTP parser cannot read as a request (a
 * Content-Length that contradicts itself or Transfer-Encoding, a method in
 * lower case, header fields past the size limit), written raw on the
 * socket, as Node's own bare "400 Bad Request" would be: a problem+json
 * with a request id like every other answer, then the connection closes,
 * since where the next request would begin is unknown.
 */
export function unparsableRequestAnswer(errorCode: string | undefined): string {
  const tooLarge = errorCode === "HPE_HEADER_OVERFLOW";
  const status = tooLarge ? 431 : 400;
  const body = JSON.stringify({
    type: problemType(tooLarge ? "header-fields-too-large" : "malformed-request"),
    title: tooLarge ? "Request header fields too large" : "Malformed request",
    status,
    detail: tooLarge
      ? "The request's header fields are larger than the server reads."
      : "The request is not valid HTTP/1.1 (its framing, its method or a header field).",
  });
  const headers = {
    ...SECURITY_HEADERS,
    "Content-Type": PROBLEM_CONTENT_TYPE,
    "Cache-Control": "no-store",
    [REQUEST_ID_HEADER]: requestIdFrom(undefined),
    "Content-Length": String(Buffer.byteLength(body)),
    Connection: "close",
  };
  const head = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`);
  return `HTTP/1.1 ${status} ${tooLarge ? "Request Header Fields Too Large" : "Bad Request"}\r\n${head.join("")}\r\n${body}`;
}

/**
 * X-Forwarded-For as the app reads it (lib/http/client-address.ts counts
 * back from its end past the trusted proxies): what arrived, with the
 * connection's peer appended.
 */
export function forwardedFor(
  received: string | string[] | undefined,
  peer: string | undefined,
): string {
  return [received ?? [], peer ?? "unknown"].flat().join(", ");
}

// The path as sent, still percent-encoded, whether the target is
// origin-form ("/a?b") or, from a client talking as to a proxy,
// absolute-form ("http://host/a?b").
function decodes(target: string): boolean {
  try {
    decodeURIComponent(new URL(target, "http://origin.invalid").pathname);
    return true;
  } catch {
    return false;
  }
}

// The request id is made here, for a refusal only: a request passed on gets
// its own from the route it reaches.
function refusal(
  requestHeaders: IncomingHttpHeaders,
  status: Refusal["status"],
  slug: string,
  title: string,
  detail: string,
  extraHeaders: Record<string, string> = {},
): Refusal {
  return {
    status,
    headers: {
      ...SECURITY_HEADERS,
      "Content-Type": PROBLEM_CONTENT_TYPE,
      "Cache-Control": "no-store",
      [REQUEST_ID_HEADER]: requestIdFrom(requestHeaders[REQUEST_ID_HEADER.toLowerCase()]),
      ...extraHeaders,
    },
    body: JSON.stringify({ type: problemType(slug), title, status, detail }),
  };
}
