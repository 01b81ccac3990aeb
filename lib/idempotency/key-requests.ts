import { assertNever } from "@/lib/assert-never";
import { rawSql, run, sql, type Queryable } from "@/lib/db/sql";
import type { KeyRequestAnswer } from "@/lib/generated/prisma/enums";
import { outcomeStatus, type Outcome } from "@/lib/idempotency/outcomes";

/**
 * Every request that presents a key to the checkout is recorded once its
 * answer is known: when it arrived, its status, how it was answered, its
 * X-Request-Id. The key inspector shows them beside the recovery points, so
 * a shopper sees the double click's second request answered 409 and the
 * retry answered with the stored order.
 *
 * The record is written behind the answer, with others in one statement
 * (lib/idempotency/key-request-recorder.ts), and outside every statement of
 * the claim: it can neither slow a claim nor fail a payment, and a replay
 * stays one statement. A failed record is logged and forgotten.
 */

/**
 * How many of a key's requests are kept: the first FIRST_KEPT and the latest
 * LATEST_KEPT. A shopper's retries are a handful; a client stuck in a retry
 * loop, or a storm of one key, would otherwise grow one key's list without
 * end. The counter still counts every one, so the page says how many are
 * not shown.
 */
export const FIRST_KEPT = 10;
export const LATEST_KEPT = 20;

/** What one request was answered, as recorded. */
export interface KeyRequestAnswerOf {
  answer: KeyRequestAnswer;
  status: number;
}

/**
 * How an outcome answered the request, or undefined when the request did
 * not get as far as naming a usable key (no key, a malformed one) or was
 * refused before it was looked at for another reason than its body: such a
 * request presented no key of this account's.
 */
export function keyRequestAnswerOf(
  outcome: Outcome,
  { answerLost = false }: { answerLost?: boolean } = {},
): KeyRequestAnswerOf | undefined {
  const status = outcomeStatus(outcome);
  switch (outcome.kind) {
    case "completed":
      return { answer: answerLost ? "lost" : "completed", status };
    case "replay":
      return { answer: "replay", status };
    case "in-flight":
    case "lease-lost":
      return { answer: "conflict", status };
    case "fingerprint-mismatch":
      return { answer: "mismatch", status };
    case "database-unavailable":
    case "internal-error":
    case "dependency-rejected":
    case "dependency-unavailable":
      return { answer: "failed", status };
    case "unsupported-media-type":
    case "body-too-large":
    case "body-incomplete":
    case "malformed-json":
    case "unacceptable-json":
    case "invalid-body":
    case "rate-limited":
      return { answer: "rejected", status };
    case "unauthenticated":
    case "several-sessions":
    case "cross-site":
    case "key-missing":
    case "key-invalid":
    case "key-repeated":
      return undefined;
    default:
      return assertNever(outcome, "outcome");
  }
}

export interface KeyRequestRecord extends KeyRequestAnswerOf {
  accountId: string;
  idempotencyKey: string;
  requestId: string;
  /**
   * When the request arrived and was answered, by the app's clock: records
   * are written behind their answers, a batch at a time
   * (lib/idempotency/key-request-recorder.ts), and a time taken when the
   * batch is written would shift with the batch's wait.
   */
  receivedAt: Date;
  answeredAt: Date;
}

/**
 * The records commit without waiting for the disk (SET LOCAL, inside the
 * statement): a record lost in a PostgreSQL crash loses a line of a key's
 * story, never a payment.
 */
const ASYNC_COMMIT = `set_config('synchronous_commit', 'off', true) = 'off'`;

/**
 * Records requests under their accounts' keys, if the accounts have those
 * keys now. Each is looked up under its own account, so no request can
 * write under another account's key; a request whose key has no row (its
 * claim was released, say after a 429) leaves no record, as it leaves
 * nothing else. One statement, for any number of requests and keys:
 *
 *   1. count them: an upsert on each key's counter row, adding the key's
 *      requests in this batch. The counter row's lock makes concurrent
 *      batches of one key take turns, so each request gets its own `nth`;
 *      the rows are locked in key order, so two batches never deadlock
 *      (the key's own row, which the attempt holding the key still writes,
 *      is only read);
 *   2. insert them with those `nth`s, in the order they were answered;
 *   3. delete what fell between the first FIRST_KEPT and the latest
 *      LATEST_KEPT. A batch that waited its turn does not see rows
 *      committed while it waited (the statement's snapshot is older), so a
 *      few can outlive their turn until the key's next batch; readers show
 *      the first and latest by `nth` whatever is stored.
 *
 * Returns how many were recorded.
 */
export async function recordKeyRequests(
  db: Queryable,
  records: readonly KeyRequestRecord[],
): Promise<number> {
  const column = <T>(of: (record: KeyRequestRecord) => T) => records.map(of);
  const [row] = await run<{ recorded: number }>(
    db,
    sql`WITH batch AS (
        SELECT * FROM unnest(${column((r) => r.accountId)}::text[], ${column((r) => r.idempotencyKey)}::text[],
                             ${column((r) => r.requestId)}::text[], ${column((r) => r.receivedAt.toISOString())}::timestamptz[],
                             ${column((r) => r.answeredAt.toISOString())}::timestamptz[], ${column((r) => r.status)}::int[],
                             ${column((r) => r.answer)}::key_request_answer[])
               WITH ORDINALITY AS batch(scope, idem_key, request_id, received_at, answered_at, status, answer, answered_order)
      ), presented AS (
        SELECT keys.id AS key_id, batch.*,
               row_number() OVER (PARTITION BY keys.id ORDER BY batch.answered_order) AS nth_in_batch,
               count(*) OVER (PARTITION BY keys.id) AS in_batch
          FROM batch JOIN idempotency_keys keys ON keys.scope = batch.scope AND keys.idem_key = batch.idem_key
         WHERE ${rawSql(ASYNC_COMMIT)}
      ), counted AS (
        INSERT INTO idempotency_key_request_counts AS counts (key_id, seen)
        SELECT key_id, in_batch FROM presented WHERE nth_in_batch = 1 ORDER BY key_id
        ON CONFLICT (key_id) DO UPDATE SET seen = counts.seen + excluded.seen
        RETURNING key_id, seen
      ), recorded AS (
        INSERT INTO idempotency_key_requests (key_id, nth, request_id, received_at, answered_at, status, answer)
        SELECT key_id, counted.seen - presented.in_batch + presented.nth_in_batch, request_id,
               received_at, answered_at, status, answer
          FROM presented JOIN counted USING (key_id)
        RETURNING key_id, nth
      ), trimmed AS (
        DELETE FROM idempotency_key_requests old
         USING (SELECT key_id, max(nth) AS latest FROM recorded GROUP BY key_id) newest
         WHERE old.key_id = newest.key_id
           AND old.nth > ${FIRST_KEPT}::int
           AND old.nth <= newest.latest - ${LATEST_KEPT}::int
      )
      SELECT count(*)::int AS recorded FROM recorded`,
  );
  return row?.recorded ?? 0;
}
