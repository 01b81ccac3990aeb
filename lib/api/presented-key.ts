import { IDEMPOTENCY_KEY_HEADER } from "@/lib/http/headers";
import { requestIdFor } from "@/lib/http/request-id";
import { parseIdempotencyKey } from "@oncepay/idempotency/request";
import type { KeyRequestRecorder } from "@/lib/idempotency/key-request-recorder";
import type { KeyRequestAnswerOf } from "@/lib/idempotency/key-requests";
import { currentContext } from "@/lib/observability/request-context";

/** Records the request under the key it presented, if its header names one; written behind the answer. */
export function recordPresentedKey(
  recorder: KeyRequestRecorder,
  request: Request,
  accountId: string,
  answered: KeyRequestAnswerOf | undefined,
  startedAt: number,
): void {
  const key = parseIdempotencyKey(request.headers.get(IDEMPOTENCY_KEY_HEADER));
  if (!answered || !key.ok) return;
  recorder.record({
    ...answered,
    accountId,
    idempotencyKey: key.key,
    requestId: currentContext()?.requestId ?? requestIdFor(request),
    elapsedMs: performance.now() - startedAt,
  });
}
