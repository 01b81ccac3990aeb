import { PROBLEMS as BODY_PROBLEMS } from "@oncepay/idempotency/fetch";
import { RETRY_AFTER_HEADER, WWW_AUTHENTICATE_HEADER } from "@/lib/http/headers";
import { problemResponse, problemType } from "@/lib/http/problem";

/**
 * Problems with the request itself, before any endpoint logic runs: who sent
 * it and whether its body can be read. They mean the same on every endpoint,
 * keyed or not, so they are defined once here; the idempotency layer's
 * outcome table takes these rows as they are, and endpoints outside it (the
 * demo settings, the lab) answer with them directly.
 */
export const REQUEST_PROBLEMS = {
  unauthenticated: { status: 401, slug: "unauthenticated", title: "Authentication required" },
  // Its own type, so a client can tell it apart: its answer repairs the cookies, so the same request sent again works.
  "several-sessions": {
    status: 401,
    slug: "several-session-cookies",
    title: "More than one session cookie",
  },
  "cross-site": { status: 403, slug: "cross-site-request", title: "Cross-site request refused" },
  // The body's problems: the engine's reader finds them, and its table names them.
  "unsupported-media-type": BODY_PROBLEMS["unsupported-media-type"],
  "body-too-large": BODY_PROBLEMS["body-too-large"],
  "body-incomplete": BODY_PROBLEMS["body-incomplete"],
  "malformed-json": BODY_PROBLEMS["malformed-json"],
  "unacceptable-json": BODY_PROBLEMS["unacceptable-json"],
  "invalid-body": BODY_PROBLEMS["invalid-body"],
  "rate-limited": { status: 429, slug: "rate-limited", title: "Too many requests" },
} as const satisfies Record<string, { status: number; slug: string; title: string }>;

export type RequestProblemKind = keyof typeof REQUEST_PROBLEMS;

/** Sent with every 401 (RFC 9110 requires a challenge). */
export const WWW_AUTHENTICATE = 'Bearer realm="oncepay"';

export interface FieldError {
  path: string;
  message: string;
}

export function requestProblemResponse(
  kind: Exclude<RequestProblemKind, "invalid-body" | "rate-limited">,
  detail: string,
): Response;
export function requestProblemResponse(
  kind: "invalid-body",
  detail: string,
  errors: FieldError[],
): Response;
export function requestProblemResponse(
  kind: RequestProblemKind,
  detail: string,
  errors?: FieldError[],
): Response {
  const { status, slug, title } = REQUEST_PROBLEMS[kind];
  const headers: Record<string, string> =
    status === 401 ? { [WWW_AUTHENTICATE_HEADER]: WWW_AUTHENTICATE } : {};
  return problemResponse(
    { type: problemType(slug), title, status, detail, ...(errors && { errors }) },
    headers,
  );
}

/** 429: the caller sent more than its limit allows; Retry-After says when the window ends. */
export function rateLimitedResponse(detail: string, retryAfterSeconds: number): Response {
  const { status, slug, title } = REQUEST_PROBLEMS["rate-limited"];
  return problemResponse(
    { type: problemType(slug), title, status, detail },
    { [RETRY_AFTER_HEADER]: String(retryAfterSeconds) },
  );
}
