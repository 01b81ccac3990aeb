import { mkdir } from "node:fs/promises";
import { PGlite } from "@electric-sql/pglite";
import { PGLiteSocketServer } from "@electric-sql/pglite-socket";
import { keepProtocolBatchesTogether } from "@/lib/db/protocol-batches";

/**
 * PostgreSQL compiled to WebAssembly, persisted in a folder and served on a
 * local TCP port so the app reaches it through the same `pg` adapter and SQL
 * as a real server. It runs one session: statements from all connections are
 * serialised, which is correct but not concurrent, so race and load tests
 * must use a real PostgreSQL.
 */
export interface EmbeddedDatabase {
  url: string;
  connectionSlots: number;
  close(): Promise<void>;
}

/** @param dataDir where to persist the data; `undefined` keeps it in memory (tests). */
export async function startEmbeddedDatabase(
  dataDir: string | undefined,
  connectionSlots = 10,
): Promise<EmbeddedDatabase> {
  if (dataDir) await mkdir(dataDir, { recursive: true });
  const db = dataDir ? await PGlite.create(dataDir) : await PGlite.create();
  // The pool behind the app must never open more connections than there are
  // slots here: an extra one is refused in the middle of a query.
  const server = new PGLiteSocketServer({
    db,
    host: "127.0.0.1",
    port: 0,
    maxConnections: connectionSlots,
  });
  keepProtocolBatchesTogether(server);
  await server.start();
  const port = portOf(server.getServerConn());
  return {
    url: `postgresql://postgres@127.0.0.1:${port}/postgres?sslmode=disable`,
    connectionSlots,
    async close() {
      await server.stop();
      await db.close();
    },
  };
}

/** The socket server reports where it listens as "host:port". */
function portOf(address: string): number {
  const port = Number(address.split(":").pop());
  if (!Number.isInteger(port) || port <= 0)
    throw new Error(`Embedded database did not report a port (got "${address}")`);
  return port;
}
