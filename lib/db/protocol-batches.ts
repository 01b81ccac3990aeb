import type { PGlite } from "@electric-sql/pglite";
import type { PGLiteSocketServer } from "@electric-sql/pglite-socket";

/**
 * Keeps each connection's extended-protocol batch together on the embedded
 * database's single session.
 *
 * pglite-socket (0.2.17) queues every protocol message from every connection
 * in one queue and keeps a connection's messages together only while a
 * transaction is open. But Parse, Bind, Describe, Execute … Sync from one
 * connection share the session's unnamed statement and portal until Sync, so
 * two connections' batches interleave and fail with `portal "" does not
 * exist` or `unnamed prepared statement does not exist`, or worse, bind to
 * each other's statements (upstream: electric-sql/pglite#1046). Under a
 * double-click or any two requests at once the app hit it at once.
 *
 * This replaces the queue's scheduler: a connection that has begun a batch
 * (or holds a transaction) keeps the session until its batch ends, and one
 * failing message no longer stops the queue for good (the other defect of
 * the same report). It reaches into the queue's internals, which is why it is
 * here alone, with a test (protocol-batches.test.ts) that fails without it.
 */
interface QueuedMessage {
  handlerId: number;
  message: Uint8Array;
  resolve(bytes: number): void;
  reject(error: unknown): void;
  onData(data: Uint8Array): void;
}

interface QueryQueue {
  queue: QueuedMessage[];
  processing: boolean;
  lastHandlerId: number | null;
  db: PGlite;
  processQueue(): Promise<void>;
  clearQueueForHandler(handlerId: number): void;
}

// Frontend message types (PostgreSQL protocol, "Message Formats").
const SYNC = 0x53; // 'S'
const SIMPLE_QUERY = 0x51; // 'Q'
const BATCH_MESSAGES = new Set([0x50, 0x42, 0x44, 0x45, 0x43, 0x48]); // Parse, Bind, Describe, Execute, Close, Flush

export function keepProtocolBatchesTogether(server: PGLiteSocketServer): void {
  const queue = (server as unknown as { queryQueue?: QueryQueue }).queryQueue;
  if (!queue || !Array.isArray(queue.queue) || typeof queue.processQueue !== "function") {
    throw new Error(
      "pglite-socket's query queue is not where this workaround expects it; check lib/db/protocol-batches.ts against the installed version",
    );
  }
  // The connection whose extended-protocol batch is open, if any.
  let batchOwner: number | null = null;

  queue.processQueue = async function processQueue(this: QueryQueue) {
    if (this.processing) return;
    this.processing = true;
    try {
      while (this.queue.length > 0) {
        const pinned = batchOwner ?? (this.db.isInTransaction() ? this.lastHandlerId : null);
        const index =
          pinned === null ? 0 : this.queue.findIndex((item) => item.handlerId === pinned);
        if (index === -1) break; // the owner's next message will start the queue again
        const [item] = this.queue.splice(index, 1);
        if (!item) break;
        const type = item.message[0];
        let bytes = 0;
        try {
          await this.db.runExclusive(() =>
            this.db.execProtocolRawStream(item.message, {
              onRawData: (data: Uint8Array) => {
                bytes += data.length;
                item.onData(data);
              },
            }),
          );
        } catch (error) {
          batchOwner = null;
          item.reject(error);
          continue;
        }
        this.lastHandlerId = item.handlerId;
        if (type !== undefined && BATCH_MESSAGES.has(type)) batchOwner = item.handlerId;
        else if (type === SYNC || type === SIMPLE_QUERY) batchOwner = null;
        item.resolve(bytes);
      }
    } finally {
      this.processing = false;
    }
  };

  // A connection that goes away mid-batch must not hold the session forever.
  const clearQueueForHandler = queue.clearQueueForHandler.bind(queue);
  queue.clearQueueForHandler = (handlerId: number) => {
    clearQueueForHandler(handlerId);
    if (batchOwner === handlerId) {
      batchOwner = null;
      void queue.processQueue();
    }
  };
}
