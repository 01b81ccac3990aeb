/**
 * The strategy lab's crash scenario, browser side and framework-free: the
 * first request crashes on the server right after its charge; the client
 * retries with the same key and body at once, then every second while the
 * key is still in progress (409, or no answer), until a final answer or the
 * key's in-flight expiry (and a margin) has passed. What the retries got is
 * only the browser's to see; orders and charges are the server's report.
 */
import type { FetchLike } from "@/lib/client/attempt";
import { labelOf } from "@/lib/client/lab-storm";
import type { CrashPlan, StormRequest } from "@/lib/lab/storms";

export interface CrashAttempt {
  /** Since the first request was sent. */
  atMs: number;
  /** "500", "409", "201", "201 replayed", "network error" */
  label: string;
}

export interface CrashObservation {
  stormId: string;
  attempts: CrashAttempt[];
}

export interface CrashDeps {
  fetch: FetchLike;
  now(): number;
  sleep(ms: number): Promise<void>;
}

export const RETRY_EVERY_MS = 1000;
// Past the key's in-flight expiry, how long retries go on before the scenario gives up.
const MARGIN_MS = 15_000;

export async function runCrashScenario(
  deps: CrashDeps,
  run: { stormId: string; request: StormRequest; crash: CrashPlan },
  onAttempt: (attempts: CrashAttempt[]) => void = () => undefined,
): Promise<CrashObservation> {
  const { request, crash } = run;
  const body = JSON.stringify(request.body);
  const startedAt = deps.now();
  const attempts: CrashAttempt[] = [];
  const send = async (crashHere: boolean) => {
    const headers = crashHere
      ? { ...request.headers, [crash.header.name]: crash.header.value }
      : request.headers;
    const sentAt = deps.now();
    const label = await deps
      .fetch(request.path, { method: request.method, credentials: "same-origin", headers, body })
      .then(labelOf, () => "network error");
    attempts.push({ atMs: Math.round(sentAt - startedAt), label });
    onAttempt([...attempts]);
    return label;
  };

  await send(true);
  // The key's expiry runs from when the crashed request reserved it, which
  // is before its (lost) answer and may be long after the scenario began (a
  // key store started on first use): count from the answer.
  const crashAnsweredAt = deps.now();
  let last = await send(false);
  const deadline = crashAnsweredAt + (crash.inFlightExpirySeconds ?? 0) * 1000 + MARGIN_MS;
  while (stillInProgress(last) && deps.now() < deadline) {
    await deps.sleep(RETRY_EVERY_MS);
    last = await send(false);
  }
  return { stormId: run.stormId, attempts };
}

/** No final answer yet: the key is held (409), or the server failed or did not answer. */
export function stillInProgress(label: string): boolean {
  return label === "409" || label === "network error" || label.startsWith("5");
}

/** What the retries got, in short: the first answer after the crash, how long 409 lasted, and the final answer. */
export interface RetrySummary {
  atOnce: string | null;
  /** From the first 409 to the first final answer; null when no 409 came. */
  inProgressMs: number | null;
  final: string | null;
}

export function summarizeRetries(attempts: readonly CrashAttempt[]): RetrySummary {
  const retries = attempts.slice(1);
  const firstConflict = retries.find((attempt) => attempt.label === "409");
  const final = retries.find((attempt) => !stillInProgress(attempt.label)) ?? null;
  // Until the final answer, or the last retry when none came.
  const conflictEnded = final ?? retries.at(-1);
  return {
    atOnce: retries[0]?.label ?? null,
    inProgressMs: firstConflict && conflictEnded ? conflictEnded.atMs - firstConflict.atMs : null,
    final: final?.label ?? null,
  };
}
