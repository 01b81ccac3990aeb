import type { Queryable } from "@/lib/db/sql";
import { recordKeyRequests, type KeyRequestRecord } from "@/lib/idempotency/key-requests";
import { errorFields, log } from "@/lib/log";

/**
 * Writes the requests presented under keys behind their answers, a batch
 * at a time. An answer never waits for its record: a replay is then one
 * statement (the claim's), and a first-time checkout has one round trip
 * fewer. Records answered within WRITE_DELAY_MS of each other share one
 * statement, so a busy server writes a fraction of the statements, and a
 * storm of one key a handful instead of one per request.
 *
 * The cost: a key's story shows a request up to WRITE_DELAY_MS (plus the
 * write) after its answer, and the records still queued when the process
 * dies are lost with it, as records lost in a database crash are
 * (lib/idempotency/key-requests.ts). Readers wait for a record; they never
 * assume it.
 */
export interface KeyRequestRecorder {
  /** Queues a record, dated now as answered. Never throws; a failed write is logged. */
  record(record: Omit<KeyRequestRecord, "answeredAt" | "receivedAt"> & { elapsedMs: number }): void;
  /** Settles once every record queued so far is written (or its write failed and was logged). */
  flushed(): Promise<void>;
}

/** How long the first record of a batch waits for others. */
const WRITE_DELAY_MS = 25;
/** A batch this large is written at once. */
const MAX_BATCH = 200;
/**
 * While the database is away, records pile up: past this many, new ones are
 * dropped (logged once each time the bound is reached) rather than growing
 * the heap without end.
 */
const MAX_QUEUED = 10_000;

export function keyRequestRecorder(db: Queryable): KeyRequestRecorder {
  let queue: KeyRequestRecord[] = [];
  let timer: NodeJS.Timeout | undefined;
  // Queued or in a batch not yet written: what the heap holds.
  let pending = 0;
  let dropping = false;
  // One batch at a time, in the order they were taken: each waits for the one before.
  let writing = Promise.resolve();

  const writeQueued = (): Promise<void> => {
    clearTimeout(timer);
    timer = undefined;
    const batch = queue;
    queue = [];
    if (batch.length > 0)
      writing = writing.then(async () => {
        await write(db, batch);
        pending -= batch.length;
      });
    return writing;
  };

  return {
    record({ elapsedMs, ...record }) {
      if (pending >= MAX_QUEUED) {
        if (!dropping) log.warn("idempotency.key_requests_dropped", { pending });
        dropping = true;
        return;
      }
      dropping = false;
      pending++;
      const answeredAt = new Date();
      queue.push({ ...record, answeredAt, receivedAt: new Date(answeredAt.getTime() - elapsedMs) });
      if (queue.length >= MAX_BATCH) void writeQueued();
      else timer ??= setTimeout(writeQueued, WRITE_DELAY_MS);
    },
    flushed: writeQueued,
  };
}

async function write(db: Queryable, batch: readonly KeyRequestRecord[]): Promise<void> {
  try {
    await recordKeyRequests(db, batch);
  } catch (error) {
    log.warn("idempotency.key_requests_not_recorded", {
      count: batch.length,
      ...errorFields(error),
    });
  }
}
