/**
 * A server of the package's route, run as a child process by the crash
 * matrix, that kills itself (SIGKILL: no cleanup, no answer) at the point
 * CRASH_AT names. Its database and its service live in the test's process,
 * so both outlive it.
 *
 * Environment: DATABASE_URL, DATABASE_CONCURRENT ("1" on a PostgreSQL
 * server), STORE ("pg" or "prisma"), SERVICE_URL, LEASE_SECONDS, OPERATION
 * ("ledger", or "call-first": one that starts with its side effect), CRASH_AT
 * (a crash point, "before-call", "after-commit", or empty). Prints
 * "listening <port>".
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import pg from "pg";
import { createEngine } from "../../src/index.js";
import { idempotentRoute } from "../../src/fetch.js";
import { httpService } from "./fake-service.js";
import { callFirstOperation, ledgerOperation } from "./ledger-operation.js";
import { storeUnderTest, type StoreKind, type StoreUnderTest } from "./stores.js";

const env = process.env;
const concurrent = env.DATABASE_CONCURRENT === "1";
const crashAt = env.CRASH_AT ?? "";
const die = (point: string) => {
  if (point === crashAt) process.kill(process.pid, "SIGKILL");
};

const database = {
  url: env.DATABASE_URL!,
  concurrent,
  statements: concurrent ? ("prepared" as const) : ("unnamed" as const),
  pool: new pg.Pool({ connectionString: env.DATABASE_URL, max: concurrent ? 10 : 1 }),
};
database.pool.on("error", () => undefined);
const timings = { leaseSeconds: Number(env.LEASE_SECONDS), ttlSeconds: 3600 };
// Whichever store it is, the operation writes with that store's own transaction.
const underTest = storeUnderTest(
  env.STORE as StoreKind,
  database,
  timings,
) as StoreUnderTest<unknown>;
const operation = (env.OPERATION === "call-first" ? callFirstOperation : ledgerOperation)(
  httpService(env.SERVICE_URL!),
  (tx, row) => underTest.writeEffect(tx, row),
  { onPoint: die, beforeCall: async () => die("before-call") },
);
const engine = createEngine({ store: underTest.store, operations: [operation] });
const route = idempotentRoute({ engine, operation, scope: () => "crash-matrix" });

const server = createServer(async (incoming, outgoing) => {
  const chunks: Buffer[] = [];
  for await (const chunk of incoming) chunks.push(chunk as Buffer);
  const request = new Request(`http://127.0.0.1${incoming.url}`, {
    method: incoming.method,
    headers: incoming.headers as Record<string, string>,
    body: Buffer.concat(chunks),
  });
  const response = await route(request);
  // Committed, and the answer never leaves: the lost-response case.
  die("after-commit");
  outgoing.writeHead(response.status, Object.fromEntries(response.headers));
  outgoing.end(Buffer.from(await response.arrayBuffer()));
});
server.listen(0, "127.0.0.1", () => {
  console.log(`listening ${(server.address() as AddressInfo).port}`);
});
