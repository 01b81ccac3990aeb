import type { LoggedAttempt } from "@/lib/client/attempt-log";

type AttemptFacts = Pick<LoggedAttempt, "status" | "failure" | "replayed">;

/** A short name for an HTTP answer, in the words of the idempotency contract. */
export function describeStatus({ status, replayed }: AttemptFacts): string {
  if (status === null) return "no answer";
  if (status === 202) return `202 ${replayed ? "stored result: " : ""}your bank asks first`;
  if (status >= 200 && status < 300) return `${status} ${replayed ? "stored result" : "created"}`;
  const names: Record<number, string> = {
    400: "bad request",
    401: "not signed in",
    402: "declined",
    409: "still in progress",
    422: "key reused for another request",
    429: "rate limited",
    500: "server error",
    503: "service unavailable",
  };
  return `${status} ${names[status] ?? (status >= 500 ? "server error" : "refused")}`;
}

/** Why an attempt did not settle the intent, for "Retrying … : <why>". */
export function describeFailure(attempt: AttemptFacts): string {
  if (attempt.failure === "timeout") return "the last attempt timed out";
  if (attempt.failure === "network") return "the last attempt got no answer (connection lost)";
  return `the last attempt got ${describeStatus(attempt)}`;
}

/**
 * What an attempt that asked to wait (Prefer: wait) and was waited for says:
 * how long the server held it for the key's first attempt, and what came of it.
 */
export function describeWait({
  replayed,
  durationMs,
}: Pick<LoggedAttempt, "replayed" | "durationMs">): string {
  const waited = formatDuration(durationMs ?? 0);
  return replayed
    ? `Waited ${waited} for the first attempt, and got its answer`
    : `Waited ${waited}; the first attempt is still running`;
}

export function formatDuration(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(2)} s`;
}
