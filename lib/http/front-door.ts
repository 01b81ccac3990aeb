import type { IncomingHttpHeaders } from "node:http";
import { DOT_SEGMENT_PATTERN, DOT_SEGMENT_PROBLEM } from "@/lib/http/balancer-problems";
import { REQUEST_ID_HEADER } from "@/lib/http/headers";
import { describedByLink, PROBLEM_CONTENT_TYPE, problemType } from "@/lib/http/problem-type";
import { requestIdFrom } from "@/lib/http/request-id";
import { SECURITY_HEADERS } from "@/lib/http/security-headers";

/**
 * What OncePay's own HTTP server (scripts/serve.mts) does with a request
 * before Next.js sees it. Three jobs, all about what a client can write:
 *
 * - Answer what Next.js would answer with a 5xx, a redirect off-site or
 *   nothing at all (a path that does not percent-decode, a method its
 *   router cannot take, the `*` target, a target that names another
 *   host, an expectation it cannot meet), or would route elsewhere than
 *   the path says (a dot segment): a problem+json here, or the 204
 *   `OPTIONS *` means, so no request line a client can send is a 5xx or
 *   sends it elsewhere. A target in absolute form that names this host
 *   goes on in origin form, as RFC 9112 asks a server to accept it.
 * - Drop the request headers that steer Next.js itself: a client that
 *   sends `x-middleware-prefetch: 1` got `200 {}` for POST /api/orders,
 *   without the handler running.
 * - Say who the client is. Next.js records the peer in X-Forwarded-For only
 *   when the request has none, so a caller that sends its own header picks
 *   its address. Here the peer is always appended, as every proxy does.
 *
 * Imports nothing of the app beyond header, problem and request-id helpers: it runs
 * for every request, pages and static files included.
 */

const DOT_SEGMENT = new RegExp(DOT_SEGMENT_PATTERN, "i");

/** The methods Next.js's router serves; it throws on any other (TRACE, PROPFIND, …). */
export const SERVED_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];

/** An answer the front door gives itself. */
export interface FrontDoorAnswer {
  status: 204 | 400 | 405 | 417 | 421;
  headers: Record<string, string>;
  /** Empty for the 204. */
  body: string;
}

export type FrontDoorDecision =
  | { kind: "answer"; answer: FrontDoorAnswer }
  /** Passed on to Next.js, with the target in origin form ("/path?query"). */
  | { kind: "pass"; target: string };

interface FrontDoorRequest {
  method: string;
  target: string;
  headers: IncomingHttpHeaders;
}

export function frontDoor(request: FrontDoorRequest): FrontDoorDecision {
  const { method, target, headers } = request;
  const answer = (built: FrontDoorAnswer): FrontDoorDecision => ({ kind: "answer", answer: built });
  if (!SERVED_METHODS.includes(method))
    return answer(
      problem(
        headers,
        405,
        "method-not-allowed",
        "Method not allowed",
        `OncePay does not answer ${method}. Its endpoints answer at most ${SERVED_METHODS.join(", ")}.`,
        { Allow: SERVED_METHODS.join(", ") },
      ),
    );
  if (target === "*") {
    // The server as a whole: what it answers, as each endpoint's OPTIONS says for itself.
    if (method === "OPTIONS")
      return answer({
        status: 204,
        headers: { ...answerHeaders(headers), Allow: SERVED_METHODS.join(", ") },
        body: "",
      });
    return answer(
      malformedPath(
        headers,
        "The request target * is only for OPTIONS; every other request names a path.",
      ),
    );
  }
  // What routes a request must be the path as sent, which a balancer in
  // front checked: Next.js (and the URL parser, for a target in absolute
  // form) would resolve a dot segment first.
  if (DOT_SEGMENT.test(target.split("?")[0]!))
    return answer(malformedPath(headers, DOT_SEGMENT_PROBLEM.detail));
  const originForm = originFormOf(target, headers.host);
  if (originForm === undefined)
    return answer(
      problem(
        headers,
        421,
        "misdirected-request",
        "Misdirected request",
        `The request target names another host or scheme than this server's (${headers.host ?? "no Host"}): send a path, or a URL of this host.`,
      ),
    );
  if (!decodes(originForm))
    return answer(
      malformedPath(
        headers,
        "The path has a percent-encoding that is not UTF-8 (such as %ZZ or a cut-off sequence).",
      ),
    );
  return { kind: "pass", target: originForm };
}

/**
 * The answer to an `Expect` other than 100-continue (Node answers that one
 * itself): RFC 9110 lets a server refuse an expectation it cannot meet with
 * 417; Node's own 417 is bare, this one says why.
 */
export function expectationFailedAnswer(headers: IncomingHttpHeaders): FrontDoorAnswer {
  return problem(
    headers,
    417,
    "expectation-failed",
    "Expectation failed",
    `The server meets no expectation but 100-continue; this request expected ${JSON.stringify(headers.expect ?? "")}. Send it without Expect.`,
  );
}

/**
 * Request headers by which Next.js passes decisions between its own parts
 * (middleware, router, prefetch, resume, revalidation): no client may send
 * them. Next.js drops some itself (not `x-middleware-prefetch`, nor any
 * header it adds later); these prefixes cover every one it reads.
 */
const INTERNAL_HEADER =
  /^(x-middleware-|x-invoke-|x-nextjs-|x-next-|x-prerender-|next-resume$|x-now-route-matches$|x-matched-path$)/;

/** Removes from `headers` every field that steers Next.js itself; returns the names removed. */
export function dropInternalHeaders(headers: IncomingHttpHeaders): string[] {
  const dropped = Object.keys(headers).filter((name) => INTERNAL_HEADER.test(name));
  for (const name of dropped) delete headers[name];
  return dropped;
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
  const type = problemType(tooLarge ? "header-fields-too-large" : "malformed-request");
  const body = JSON.stringify({
    type,
    title: tooLarge ? "Request header fields too large" : "Malformed request",
    status,
    detail: tooLarge
      ? "The request's header fields are larger than the server reads."
      : "The request is not valid HTTP/1.1 (its framing, its method or a header field).",
  });
  const headers = {
    ...SECURITY_HEADERS,
    "Content-Type": PROBLEM_CONTENT_TYPE,
    Link: describedByLink(type),
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

/**
 * The target in origin form: as sent when it is a path; the path and query
 * of an absolute-form target (what a client talking as to a proxy sends)
 * whose scheme is HTTP and whose authority is the request's Host; otherwise
 * undefined: this server answers for no other host, and must not redirect
 * a client there (Next.js did, with a 308 to the named URL).
 */
function originFormOf(target: string, host: string | undefined): string | undefined {
  if (target.startsWith("/")) return target;
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    return undefined;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return undefined;
  if (host === undefined || url.host !== hostOf(host)) return undefined;
  return `${url.pathname}${url.search}`;
}

/** The Host field as the URL parser writes an authority (lower case, no default port). */
function hostOf(host: string): string | undefined {
  try {
    return new URL(`http://${host}`).host;
  } catch {
    return undefined;
  }
}

// The path as sent, still percent-encoded.
function decodes(target: string): boolean {
  try {
    decodeURIComponent(new URL(target, "http://origin.invalid").pathname);
    return true;
  } catch {
    return false;
  }
}

/** Every answer of the front door's own: security headers, no caching, and a request id. */
function answerHeaders(requestHeaders: IncomingHttpHeaders): Record<string, string> {
  return {
    ...SECURITY_HEADERS,
    "Cache-Control": "no-store",
    // Made here, for the front door's own answers only: a request passed on gets
    // its own from the route it reaches.
    [REQUEST_ID_HEADER]: requestIdFrom(requestHeaders[REQUEST_ID_HEADER.toLowerCase()]),
  };
}

function malformedPath(requestHeaders: IncomingHttpHeaders, detail: string): FrontDoorAnswer {
  const { status, slug, title } = DOT_SEGMENT_PROBLEM;
  return problem(requestHeaders, status, slug, title, detail);
}

function problem(
  requestHeaders: IncomingHttpHeaders,
  status: Exclude<FrontDoorAnswer["status"], 204>,
  slug: string,
  title: string,
  detail: string,
  extraHeaders: Record<string, string> = {},
): FrontDoorAnswer {
  return {
    status,
    headers: {
      ...answerHeaders(requestHeaders),
      "Content-Type": PROBLEM_CONTENT_TYPE,
      Link: describedByLink(problemType(slug)),
      ...extraHeaders,
    },
    body: JSON.stringify({ type: problemType(slug), title, status, detail }),
  };
}
