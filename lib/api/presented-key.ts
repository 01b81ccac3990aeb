import type { Queryable } from "@/lib/db/sql";
import { IDEMPOTENCY_KEY_HEADER } from "@/lib/http/headers";
import { requestIdFor } from "@/lib/http/request-id";
import { parseIdempotencyKey } from "@oncepay/idempotency/request";
import { recordKeyRequestQuietly, type KeyRequestAnswerOf } from "@/lib/idempotency/key-requests";
import { currentContext } from "@/lib/observability/request-context";

/** Records the request under the key it presented, if its header names one. */
export async function recordPresentedKey(
  statements: Queryable,
  request: Request,
  accountId: string,
  answered: KeyRequestAnswerOf | undefined,
  startedAt: number,
): Promise<void> {
  const key = parseIdempotencyKey(request.headers.get(IDEMPOTENCY_KEY_HEADER));
  if (!answered || !key.ok) return;
  await recordKeyRequestQuietly(statements, {
    ...answered,
    accountId,
    idempotencyKey: key.key,
    requestId: currentContext()?.requestId ?? requestIdFor(request),
    elapsedMs: performance.now() - startedAt,
  });
}
