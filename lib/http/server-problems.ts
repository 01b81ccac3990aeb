import { RETRY_AFTER_HEADER } from "@/lib/http/headers";
import { problemResponse, problemType } from "@/lib/http/problem";

/**
 * Failures on our side that any route can meet, keyed or not: the database
 * is unreachable, or something unexpected threw. Defined once here; the route
 * wrapper answers with them, and the idempotency layer's outcome table takes
 * the same rows (with details that speak of the key).
 */
export const SERVER_PROBLEMS = {
  "database-unavailable": {
    status: 503,
    slug: "database-unavailable",
    title: "Service temporarily unavailable",
  },
  "internal-error": { status: 500, slug: "internal-error", title: "Internal server error" },
} as const satisfies Record<string, { status: number; slug: string; title: string }>;

export type ServerProblemKind = keyof typeof SERVER_PROBLEMS;

// Long enough for a connection pool to find the database back after a blip,
// short enough that a client retrying in the meantime is not kept waiting.
export const DATABASE_UNAVAILABLE_RETRY_AFTER_SECONDS = 2;

const DETAILS: Record<ServerProblemKind, string> = {
  "database-unavailable": "The database cannot be reached. Retry in a moment.",
  "internal-error": "Something failed on our side.",
};

export function serverProblemResponse(kind: ServerProblemKind): Response {
  const { status, slug, title } = SERVER_PROBLEMS[kind];
  const headers: Record<string, string> =
    kind === "database-unavailable"
      ? { [RETRY_AFTER_HEADER]: String(DATABASE_UNAVAILABLE_RETRY_AFTER_SECONDS) }
      : {};
  return problemResponse(
    { type: problemType(slug), title, status, detail: DETAILS[kind] },
    headers,
  );
}
