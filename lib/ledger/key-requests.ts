import { z } from "zod";
import type { Database } from "@/lib/db/client";
import { KeyRequestAnswer } from "@/lib/generated/prisma/enums";
import { FIRST_KEPT, LATEST_KEPT } from "@/lib/idempotency/key-requests";

/**
 * The requests that presented one key, as GET /api/keys/{key} and the key
 * page show them: in the order they arrived, numbered as the shopper counts
 * attempts (1st, 2nd, …), with how many are not kept between the first and
 * the latest ones (lib/idempotency/key-requests.ts records them).
 */
const timestamp = z.iso.datetime();

export const keyRequestSchema = z.object({
  attempt: z
    .number()
    .int()
    .min(1)
    .describe("Which request this was, in the order they arrived: 1 for the first."),
  requestId: z.string().describe("The request's X-Request-Id."),
  receivedAt: timestamp.describe(
    "When it arrived, by the clock of the app instance that served it (`reached` is the database's clock).",
  ),
  answeredAt: timestamp,
  status: z
    .number()
    .int()
    .describe("The HTTP status it was answered with (for `lost`, the one that never arrived)."),
  answer: z
    .enum(KeyRequestAnswer)
    .describe(
      "completed: it ran the operation (the checkout, the refund) and its answer is the one stored; lost: the same, but the answer broke off on the way (a demo fault); replay: answered with the stored answer; conflict: 409, another attempt held the key; mismatch: 422, another request under the key; failed: 5xx or 502, it stopped before an answer was stored; rejected: refused for the request itself (its body, the rate limit).",
    ),
});
export type KeyRequestView = z.infer<typeof keyRequestSchema>;

export const keyRequestsSchema = z
  .object({
    seen: z.number().int().describe("How many requests presented the key."),
    notKept: z
      .number()
      .int()
      .describe(
        `How many of them are not kept: only the first ${FIRST_KEPT} and the latest ${LATEST_KEPT} are.`,
      ),
    data: z.array(keyRequestSchema),
  })
  .describe(
    "Every request that presented the key, in the order they arrived, once its answer was known.",
  );
export type KeyRequestsView = z.infer<typeof keyRequestsSchema>;

export interface StoredKeyRequest {
  nth: number;
  requestId: string;
  receivedAt: Date;
  answeredAt: Date;
  status: number;
  answer: KeyRequestAnswer;
}

/** One key's requests, read by its row's id (found under the caller's account). */
export async function keyRequestsOf(db: Database, keyId: string): Promise<KeyRequestsView> {
  const [count, rows] = await Promise.all([
    db.idempotencyKeyRequestCount.findUnique({ where: { keyId } }),
    db.idempotencyKeyRequest.findMany({ where: { keyId }, orderBy: { nth: "asc" } }),
  ]);
  return keyRequestsView(rows, count?.seen ?? 0);
}

/**
 * The first FIRST_KEPT and the latest LATEST_KEPT of what is stored (a few
 * more can be stored for a moment, see recordKeyRequests), in the order
 * they arrived. Two requests that overlap are recorded in the order they
 * were answered, which is not the order they came in (a double click's
 * second request is answered 409 before the first finishes paying); the
 * numbering follows arrival, and the requests after the gap count the ones
 * not kept.
 */
export function keyRequestsView(stored: StoredKeyRequest[], seen: number): KeyRequestsView {
  const byNth = [...stored].sort((a, b) => a.nth - b.nth);
  const first = byNth.filter((request) => request.nth <= FIRST_KEPT);
  const latest = byNth.filter((request) => request.nth > FIRST_KEPT).slice(-LATEST_KEPT);
  const kept = [...first, ...latest];
  const notKept = Math.max(seen - kept.length, 0);
  const inArrivalOrder = (requests: StoredKeyRequest[]) =>
    [...requests].sort((a, b) => a.receivedAt.getTime() - b.receivedAt.getTime() || a.nth - b.nth);
  const view = (request: StoredKeyRequest, attempt: number): KeyRequestView => ({
    attempt,
    requestId: request.requestId,
    receivedAt: request.receivedAt.toISOString(),
    answeredAt: request.answeredAt.toISOString(),
    status: request.status,
    answer: request.answer,
  });
  // Without a gap, one order; with one, each side of it in its own.
  const data =
    notKept === 0
      ? inArrivalOrder(kept).map((request, index) => view(request, index + 1))
      : [
          ...inArrivalOrder(first).map((request, index) => view(request, index + 1)),
          ...inArrivalOrder(latest).map((request, index) =>
            view(request, first.length + notKept + index + 1),
          ),
        ];
  return { seen: Math.max(seen, kept.length), notKept, data };
}
