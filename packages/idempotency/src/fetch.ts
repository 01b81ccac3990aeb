import { canonicalJson } from "./canonical-json.js";
import type { Engine, KeyedCall, RunOptions } from "./engine.js";
import {
  IDEMPOTENCY_KEY_HEADER,
  PREFER_HEADER,
  PREFERENCE_APPLIED_HEADER,
  RETRY_AFTER_HEADER,
} from "./headers.js";
import { parseIdempotencyKey } from "./key-header.js";
import { keyLifetimeHeaders } from "./key-lifetime.js";
import { preferenceAppliedWait, preferredWaitSeconds } from "./prefer.js";
import type { Operation } from "./operation.js";
import { RETRY_AFTER_SECONDS, type Outcome } from "./outcome.js";
import { MAX_BODY_BYTES, readJsonBody, type BodyReadResult } from "./request-body.js";
import { toHttpResponse } from "./stored-response.js";

/**
 * The HTTP side, on the Fetch API's Request and Response: what Next.js
 * route handlers, Hono, Bun and Deno serve with. `idempotentRoute` wraps an
 * operation into a handler; the rest is for an app that reads the request
 * its own way and answers in its own words.
 */

/** What a request can be refused for before the engine sees it: its key, or its body. */
export type RequestProblem =
  | { kind: "key-missing" | "key-invalid" | "key-repeated"; detail: string }
  | { kind: Extract<BodyReadResult, { ok: false }>["reason"]; detail: string };

/** Every answer the adapter gives: the engine's outcomes and the request's own problems. */
export type HttpOutcome = Outcome | RequestProblem;

type ProblemKind = Exclude<HttpOutcome["kind"], "replay" | "completed">;

/** Each problem's status, its `type` (as a slug), and its title, the same for every instance of it (RFC 9457). */
export const PROBLEMS: Record<ProblemKind, { status: number; slug: string; title: string }> = {
  "key-missing": {
    status: 400,
    slug: "idempotency-key-missing",
    title: `${IDEMPOTENCY_KEY_HEADER} header missing`,
  },
  "key-invalid": {
    status: 400,
    slug: "idempotency-key-invalid",
    title: `${IDEMPOTENCY_KEY_HEADER} header invalid`,
  },
  "key-repeated": {
    status: 400,
    slug: "idempotency-key-repeated",
    title: `More than one ${IDEMPOTENCY_KEY_HEADER} header`,
  },
  "unsupported-media-type": {
    status: 415,
    slug: "unsupported-media-type",
    title: "Unsupported media type",
  },
  "body-too-large": { status: 413, slug: "body-too-large", title: "Request body too large" },
  "body-incomplete": { status: 400, slug: "body-incomplete", title: "Request body incomplete" },
  "malformed-json": { status: 400, slug: "malformed-json", title: "Malformed JSON" },
  "unacceptable-json": {
    status: 400,
    slug: "unacceptable-json",
    title: "JSON the server does not accept",
  },
  "invalid-body": { status: 400, slug: "invalid-body", title: "Invalid request body" },
  "in-flight": {
    status: 409,
    slug: "request-in-progress",
    title: "A request with this key is still in progress",
  },
  "lease-lost": {
    status: 409,
    slug: "request-in-progress",
    title: "A request with this key is still in progress",
  },
  "fingerprint-mismatch": {
    status: 422,
    slug: "idempotency-key-reused",
    title: "Idempotency key reused with a different request",
  },
  "database-unavailable": {
    status: 503,
    slug: "database-unavailable",
    title: "Service temporarily unavailable",
  },
  "internal-error": { status: 500, slug: "internal-error", title: "Internal server error" },
  "dependency-rejected": {
    status: 502,
    slug: "dependency-rejected",
    title: "A service this request needs refused it",
  },
  "dependency-unavailable": {
    status: 503,
    slug: "dependency-unavailable",
    title: "A service this request needs did not answer",
  },
};

/** How a problem's `type` is written: a URI naming it, such as a page that explains it. */
export type ProblemTypeOf = (slug: string) => string;

export const defaultProblemType: ProblemTypeOf = (slug) => `urn:oncepay:problem:${slug}`;

/** How problem answers name their problem, and where a person reads about it. */
export interface ProblemNaming {
  /** The `type` of each problem (defaultProblemType when omitted). */
  problemType?: ProblemTypeOf;
  /**
   * The page that explains a problem (what happened, what to do): given,
   * every problem answer links it, `Link: <…>; rel="describedby"`, as the
   * Idempotency-Key draft asks of its 400 and 422.
   */
  describedBy?: ProblemTypeOf;
}

export const PROBLEM_CONTENT_TYPE = "application/problem+json";

/** The request's key and JSON body, or the problem that refuses it (nothing was written). */
export async function readKeyedCall(
  request: Request,
  scope: string,
  maxBodyBytes = MAX_BODY_BYTES,
): Promise<{ ok: true; call: KeyedCall } | { ok: false; problem: RequestProblem }> {
  const key = parseIdempotencyKey(request.headers.get(IDEMPOTENCY_KEY_HEADER));
  if (!key.ok) return { ok: false, problem: { kind: `key-${key.reason}`, detail: key.detail } };
  const body = await readJsonBody(request, maxBodyBytes);
  if (!body.ok) return { ok: false, problem: { kind: body.reason, detail: body.detail } };
  const path = new URL(request.url).pathname;
  return {
    ok: true,
    call: { scope, key: key.key, method: request.method.toUpperCase(), path, body: body.json },
  };
}

/** The answer for an outcome: the stored response (replayed or not), or a problem+json. */
export function outcomeResponse(outcome: HttpOutcome, naming: ProblemNaming = {}): Response {
  const keyHeaders = {
    ...keyLifetimeHeaders("lifetime" in outcome ? outcome.lifetime : undefined),
    ...("waited" in outcome &&
      outcome.waited && {
        [PREFERENCE_APPLIED_HEADER]: preferenceAppliedWait(outcome.waited.upToMs),
      }),
  };
  switch (outcome.kind) {
    case "replay":
    case "completed": {
      const response = toHttpResponse(outcome.stored, { replayed: outcome.kind === "replay" });
      for (const [name, value] of Object.entries(keyHeaders)) response.headers.set(name, value);
      return response;
    }
  }
  const headers = new Headers({ "Content-Type": PROBLEM_CONTENT_TYPE, ...keyHeaders });
  if ("retryAfterSeconds" in outcome)
    headers.set(RETRY_AFTER_HEADER, String(outcome.retryAfterSeconds));
  const { describedBy } = naming;
  if (describedBy)
    headers.set("Link", `<${describedBy(PROBLEMS[outcome.kind].slug)}>; rel="describedby"`);
  const problem = problemDetails(outcome, naming.problemType);
  return new Response(canonicalJson(problem), { status: problem.status, headers });
}

export interface ProblemDetails {
  type: string;
  title: string;
  status: number;
  detail: string;
  [extension: string]: unknown;
}

export function problemDetails(
  outcome: Exclude<HttpOutcome, { kind: "replay" | "completed" }>,
  problemType: ProblemTypeOf = defaultProblemType,
): ProblemDetails {
  const { status, slug, title } = PROBLEMS[outcome.kind];
  const problem: ProblemDetails = {
    type: problemType(slug),
    title,
    status,
    detail: detailOf(outcome),
  };
  if (outcome.kind === "invalid-body") problem.errors = outcome.errors;
  return problem;
}

function detailOf(outcome: Exclude<HttpOutcome, { kind: "replay" | "completed" }>): string {
  switch (outcome.kind) {
    case "in-flight":
    case "lease-lost":
      return `Another attempt with this ${IDEMPOTENCY_KEY_HEADER} has not finished. Retry with the same key after ${outcome.retryAfterSeconds} s to get its result.`;
    case "fingerprint-mismatch":
      return `This ${IDEMPOTENCY_KEY_HEADER} was already used for a different request (method, path or body). Use a new key for a new request.`;
    case "database-unavailable":
      return `The database cannot be reached. Nothing happened twice; retry with the same ${IDEMPOTENCY_KEY_HEADER}.`;
    case "internal-error":
      return `Something failed on our side. Retry with the same ${IDEMPOTENCY_KEY_HEADER}; it will not happen twice.`;
    default:
      return outcome.detail;
  }
}

export interface RouteOptions<Input, Tx, Refusal> {
  engine: Engine<Tx>;
  operation: Operation<Input, Tx>;
  /**
   * Whose key the request's is (an account, a tenant), or the Response that
   * refuses it (a 401, say). Keys are unique within a scope: two callers'
   * keys never meet.
   */
  scope(request: Request): Promise<string | Response> | string | Response;
  /** Asked once per new key (a rate limit, say): a Response refuses it and releases the claim. */
  admit?: (scope: string) => Promise<Refusal | undefined>;
  /** The largest body read, in bytes (16 KiB when omitted). */
  maxBodyBytes?: number;
  /** How its problems are named, and linked to their explanations. */
  problems?: ProblemNaming;
}

/**
 * A route handler that runs `operation` once per key:
 *
 *   export const POST = idempotentRoute({ engine, operation, scope: () => "demo" });
 */
export function idempotentRoute<Input, Tx>(
  options: RouteOptions<Input, Tx, Response>,
): (request: Request) => Promise<Response> {
  const { engine, operation, problems, admit } = options;
  return async (request) => {
    const scope = await options.scope(request);
    if (scope instanceof Response) return scope;
    const read = await readKeyedCall(request, scope, options.maxBodyBytes);
    if (!read.ok) return outcomeResponse(read.problem, problems);
    const waitSeconds = preferredWaitSeconds(request.headers.get(PREFER_HEADER));
    const runOptions: RunOptions<Response> = {
      ...(admit && { admit: () => admit(scope) }),
      ...(waitSeconds !== undefined && { waitMs: waitSeconds * 1000 }),
    };
    const outcome = await engine
      .run(operation, read.call, runOptions)
      .catch((error: unknown): HttpOutcome => {
        // The claim itself failed: nothing is held, and the same key can be sent again.
        if (engine.store.isUnavailable(error)) {
          engine.reporter.error("idempotency.database_unavailable", { error });
          return {
            kind: "database-unavailable",
            retryAfterSeconds: RETRY_AFTER_SECONDS.databaseUnavailable,
          };
        }
        engine.reporter.error("idempotency.claim_failed", { error });
        return { kind: "internal-error" };
      });
    return outcome instanceof Response ? outcome : outcomeResponse(outcome, problems);
  };
}
