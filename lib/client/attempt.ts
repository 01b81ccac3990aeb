/**
 * One HTTP attempt of a checkout intent, with its own timeout. Retrying is
 * not decided here: this only reports what happened, in a shape the retry
 * loop and the attempts timeline both read.
 */
import {
  IDEMPOTENCY_KEY_HEADER,
  IDEMPOTENT_REPLAYED_HEADER,
  KEY_POLICY_HEADER,
  PREFER_HEADER,
  PREFERENCE_APPLIED_HEADER,
  REQUEST_ID_HEADER,
  RETRY_AFTER_HEADER,
} from "@/lib/http/headers";
import { parseKeyRetentionSeconds } from "./retry-policy";

export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

export type AttemptOutcome =
  | {
      kind: "response";
      status: number;
      statusText: string;
      /** The server's X-Request-Id: one per attempt, unlike the key, which is one per intent. */
      requestId: string | null;
      /** `Idempotent-Replayed: true`: the stored result of an earlier attempt, nothing charged now. */
      replayed: boolean;
      /** Preference-Applied: the server waited for another attempt that held the key (Prefer: wait). */
      waited: boolean;
      retryAfter: string | null;
      /** How long the server keeps the key (Idempotency-Key-Policy's retention); absent when it did not say. */
      keyRetentionSeconds?: number;
      /** The parsed body, or null when it was not JSON or did not arrive whole. */
      json: unknown;
      durationMs: number;
    }
  | {
      kind: "no-response";
      /** "timeout": the client gave up waiting; "network": the connection failed or was dropped. */
      reason: "timeout" | "network";
      durationMs: number;
    };

export interface AttemptRequest {
  url: string;
  /** The intent's key; null only for the lab's deliberately broken strategy. */
  idempotencyKey: string | null;
  /** Built once per intent, so every attempt sends the same bytes (and fingerprint). */
  body: string;
  timeoutMs: number;
  /** Asks the server to wait this long for another attempt that holds the key (Prefer: wait), instead of a 409. */
  waitForFirstSeconds?: number;
  fetch: FetchLike;
}

class AttemptTimeout extends Error {
  constructor(ms: number) {
    super(`No complete answer within ${ms} ms`);
    this.name = "TimeoutError";
  }
}

export async function sendAttempt({
  url,
  idempotencyKey,
  body,
  timeoutMs,
  waitForFirstSeconds,
  fetch,
}: AttemptRequest): Promise<AttemptOutcome> {
  const startedAt = performance.now();
  const elapsed = () => Math.round(performance.now() - startedAt);
  // An AbortController driven by setTimeout rather than AbortSignal.timeout():
  // fake timers control it, so tests can fire the timeout deterministically.
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new AttemptTimeout(timeoutMs)), timeoutMs);
  const headers: Record<string, string> = { "Content-Type": "application/json" };
  if (idempotencyKey !== null) headers[IDEMPOTENCY_KEY_HEADER] = idempotencyKey;
  if (idempotencyKey !== null && waitForFirstSeconds)
    headers[PREFER_HEADER] = `wait=${waitForFirstSeconds}`;

  try {
    let response: Response;
    try {
      response = await fetch(url, {
        method: "POST",
        credentials: "same-origin",
        headers,
        body,
        signal: controller.signal,
      });
    } catch {
      // Whatever the rejection says, no answer came back; a timeout is the one the client chose.
      return {
        kind: "no-response",
        reason: controller.signal.aborted ? "timeout" : "network",
        durationMs: elapsed(),
      };
    }
    // The body is read under the same timeout. A body that stalls or breaks
    // off half-way is no answer either: the result is still unknown.
    const json = await readJson(response);
    if (json === undefined) {
      return {
        kind: "no-response",
        reason: controller.signal.aborted ? "timeout" : "network",
        durationMs: elapsed(),
      };
    }
    const keyRetentionSeconds = parseKeyRetentionSeconds(response.headers.get(KEY_POLICY_HEADER));
    return {
      kind: "response",
      status: response.status,
      statusText: response.statusText,
      requestId: response.headers.get(REQUEST_ID_HEADER),
      replayed: response.headers.get(IDEMPOTENT_REPLAYED_HEADER) === "true",
      waited: response.headers.has(PREFERENCE_APPLIED_HEADER),
      retryAfter: response.headers.get(RETRY_AFTER_HEADER),
      ...(keyRetentionSeconds !== null && { keyRetentionSeconds }),
      json,
      durationMs: elapsed(),
    };
  } finally {
    clearTimeout(timer);
  }
}

/** The body as JSON; null when it is not JSON; undefined when it could not be read at all. */
async function readJson(response: Response): Promise<unknown> {
  let text: string;
  try {
    text = await response.text();
  } catch {
    return undefined;
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}
