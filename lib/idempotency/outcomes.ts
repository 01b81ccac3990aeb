import { PROBLEMS as ENGINE_PROBLEMS, type HttpOutcome } from "@oncepay/idempotency/fetch";
import { problemResponse, problemType, type ProblemDetails } from "@/lib/http/problem";
import {
  IDEMPOTENCY_KEY_HEADER,
  PREFERENCE_APPLIED_HEADER,
  RETRY_AFTER_HEADER,
  WWW_AUTHENTICATE_HEADER,
} from "@/lib/http/headers";
import { preferenceAppliedWait } from "@oncepay/idempotency/request";
import { REQUEST_PROBLEMS, WWW_AUTHENTICATE } from "@/lib/http/request-problems";
import { SERVER_PROBLEMS } from "@/lib/http/server-problems";
import {
  isDatabaseUnavailable,
  keyLifetimeHeaders,
  RETRY_AFTER_SECONDS,
  toHttpResponse,
} from "@oncepay/idempotency";

/**
 * Everything a keyed request can be answered, as one union.
 * `outcomeToResponse` maps each kind to HTTP in one table, so the contract in
 * DESIGN.md can be checked against a single place.
 */
export type Outcome =
  // Who is asking, and how often: refused before anything is written.
  | { kind: "unauthenticated"; detail: string }
  | { kind: "several-sessions"; detail: string; setCookies: string[] }
  | { kind: "cross-site"; detail: string }
  | { kind: "rate-limited"; detail: string; retryAfterSeconds: number }
  // The engine's, as the package's adapter names them: the key and the body
  // refused, the key's row, the attempt's own result, the failures (ours
  // and the payment provider's).
  | HttpOutcome;

type OutcomeKind = Outcome["kind"];
type ProblemKind = Exclude<OutcomeKind, "replay" | "completed">;

const PROBLEMS: Record<ProblemKind, { status: number; slug: string; title: string }> = {
  // The engine's answers (the key, the body, the key's row, our failures and
  // the provider's), as the package's adapter gives them.
  ...ENGINE_PROBLEMS,
  // 401, 403 and 429, and the body's, which the same table holds: the same on every endpoint.
  ...REQUEST_PROBLEMS,
  ...SERVER_PROBLEMS,
};

/**
 * What a request that threw was answered, as an outcome: the route wrapper
 * turns the error itself into the 503 or the 500, and this says which, for
 * the records that count and keep answers.
 */
export function outcomeOfThrown(error: unknown): Outcome {
  return isDatabaseUnavailable(error)
    ? { kind: "database-unavailable", retryAfterSeconds: RETRY_AFTER_SECONDS.databaseUnavailable }
    : { kind: "internal-error" };
}

export function outcomeToResponse(outcome: Outcome): Response {
  const response =
    outcome.kind === "replay" || outcome.kind === "completed"
      ? toHttpResponse(outcome.stored, { replayed: outcome.kind === "replay" })
      : problemFor(outcome);
  const lifetime = "lifetime" in outcome ? outcome.lifetime : undefined;
  for (const [name, value] of Object.entries(keyLifetimeHeaders(lifetime)))
    response.headers.set(name, value);
  // It waited for another attempt, as the client preferred (Prefer: wait).
  if ("waited" in outcome && outcome.waited)
    response.headers.set(PREFERENCE_APPLIED_HEADER, preferenceAppliedWait(outcome.waited.upToMs));
  return response;
}

/** The HTTP status an outcome is answered with (the stored one, for a replay or a completion). */
export function outcomeStatus(outcome: Outcome): number {
  return outcome.kind === "replay" || outcome.kind === "completed"
    ? outcome.stored.status
    : PROBLEMS[outcome.kind].status;
}

export function problemDetailsFor(
  outcome: Exclude<Outcome, { kind: "replay" | "completed" }>,
): ProblemDetails {
  const { status, slug, title } = PROBLEMS[outcome.kind];
  const problem: ProblemDetails = {
    type: problemType(slug),
    title,
    status,
    detail: detailFor(outcome),
  };
  if (outcome.kind === "invalid-body") problem.errors = outcome.errors;
  return problem;
}

function problemFor(outcome: Exclude<Outcome, { kind: "replay" | "completed" }>): Response {
  const headers: Record<string, string> = {};
  if ("retryAfterSeconds" in outcome)
    headers[RETRY_AFTER_HEADER] = String(outcome.retryAfterSeconds);
  if (PROBLEMS[outcome.kind].status === 401) headers[WWW_AUTHENTICATE_HEADER] = WWW_AUTHENTICATE;
  const response = problemResponse(problemDetailsFor(outcome), headers);
  if (outcome.kind === "several-sessions")
    for (const cookie of outcome.setCookies) response.headers.append("Set-Cookie", cookie);
  return response;
}

function detailFor(outcome: Exclude<Outcome, { kind: "replay" | "completed" }>): string {
  switch (outcome.kind) {
    case "in-flight":
    case "lease-lost":
      return `Another attempt with this ${IDEMPOTENCY_KEY_HEADER} has not finished. Retry with the same key after ${outcome.retryAfterSeconds} s to get its result.`;
    case "fingerprint-mismatch":
      return `This ${IDEMPOTENCY_KEY_HEADER} was already used for a different request (method, path or body). Use a new key for a new request.`;
    case "database-unavailable":
      return `The database cannot be reached. Nothing was charged twice; retry with the same ${IDEMPOTENCY_KEY_HEADER}.`;
    case "internal-error":
      return `Something failed on our side. Retry with the same ${IDEMPOTENCY_KEY_HEADER}; it will not charge twice.`;
    default:
      return outcome.detail;
  }
}
