import { assertNever } from "@/lib/assert-never";
import { rawSql, run, sql, type Queryable } from "@/lib/db/sql";
import type { KeyRequestAnswer } from "@/lib/generated/prisma/enums";
import { outcomeStatus, type Outcome } from "@/lib/idempotency/outcomes";
import { errorFields, log } from "@/lib/log";

/**
 * Every request that presents a key to the checkout is recorded once its
 * answer is known: when it arrived, its status, how it was answered, its
 * X-Request-Id. The key inspector shows them beside the recovery points, so
 * a shopper sees the double click's second request answered 409 and the
 * retry answered with the stored order.
 *
 * The record is written after the answer is decided and outside every
 * statement of the claim: it can neither slow a claim nor fail a payment.
 * A failed record is logged and forgotten.
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
  /** How long ago the request arrived, in ms: the database dates its arrival by its own clock, as it dates the recovery points. */
  elapsedMs: number;
}

/**
 * The record commits without waiting for the disk (SET LOCAL, inside the
 * statement): it runs before every keyed answer goes out, and a record lost
 * in a PostgreSQL crash loses a line of a key's story, never a payment.
 */
const ASYNC_COMMIT = `set_config('synchronous_commit', 'off', true) = 'off'`;

/**
 * Records one request under the account's key, if the account has that key
 * now. Whoever asks, the key is looked up under the caller's own account, so
 * no request can write under another account's key; a request whose key has
 * no row (its claim was released, say after a 429) leaves no record, as it
 * leaves nothing else. One statement:
 *
 *   1. count it: an upsert on the key's counter row, whose lock makes
 *      concurrent recordings of one key take turns, so each gets its own
 *      `nth` (the key's own row, which the attempt holding the key still
 *      writes, is only read);
 *   2. insert it with that `nth`;
 *   3. delete what fell between the first FIRST_KEPT and the latest
 *      LATEST_KEPT. A recording that waited its turn does not see rows
 *      committed while it waited (the statement's snapshot is older), so a
 *      few can outlive their turn until the next recording; readers show
 *      the first and latest by `nth` whatever is stored.
 *
 * Returns whether a record was written.
 */
export async function recordKeyRequest(db: Queryable, record: KeyRequestRecord): Promise<boolean> {
  const rows = await run<{ nth: number }>(
    db,
    sql`WITH presented AS (
        SELECT id FROM idempotency_keys
         WHERE scope = ${record.accountId} AND idem_key = ${record.idempotencyKey}
           AND ${rawSql(ASYNC_COMMIT)}
      ), counted AS (
        INSERT INTO idempotency_key_request_counts AS counts (key_id, seen)
        SELECT id, 1 FROM presented
        ON CONFLICT (key_id) DO UPDATE SET seen = counts.seen + 1
        RETURNING key_id, seen
      ), recorded AS (
        INSERT INTO idempotency_key_requests (key_id, nth, request_id, received_at, answered_at, status, answer)
        SELECT key_id, seen, ${record.requestId},
               clock_timestamp() - make_interval(secs => ${record.elapsedMs / 1000}::float8),
               clock_timestamp(), ${record.status}::int, ${record.answer}::key_request_answer
          FROM counted
        RETURNING key_id, nth
      ), trimmed AS (
        DELETE FROM idempotency_key_requests old USING recorded
         WHERE old.key_id = recorded.key_id
           AND old.nth > ${FIRST_KEPT}::int
           AND old.nth <= recorded.nth - ${LATEST_KEPT}::int
      )
      SELECT nth FROM recorded`,
  );
  return rows.length > 0;
}

/**
 * recordKeyRequest for the answer path: never throws, and waits at most
 * RECORD_WAIT_MS before letting the answer go. A record slower than that
 * (the database is struggling) finishes on its own; one that fails is
 * logged. Either way the client gets the answer its checkout earned.
 */
const RECORD_WAIT_MS = 250;

export async function recordKeyRequestQuietly(
  db: Queryable,
  record: KeyRequestRecord,
): Promise<void> {
  const recorded = recordKeyRequest(db, record).catch((error: unknown) => {
    log.warn("idempotency.key_request_not_recorded", {
      status: record.status,
      answer: record.answer,
      ...errorFields(error),
    });
  });
  let timer: NodeJS.Timeout | undefined;
  const waited = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, RECORD_WAIT_MS);
  });
  await Promise.race([recorded, waited]);
  clearTimeout(timer);
}
