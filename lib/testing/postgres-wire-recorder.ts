import net from "node:net";
import { postgresMessageReader } from "@/lib/db/protocol-messages";

/**
 * A TCP proxy in front of PostgreSQL (or PgBouncer) that reads what clients
 * send: every simple Query and every Parse of the extended protocol, with
 * the statement's name. A test points an app at it to see, on the wire,
 * what a transaction-mode pooler would break: named prepared statements and
 * session state (SET, session advisory locks, LISTEN, temporary tables).
 */
export interface RecordedStatement {
  /** "query": a simple Query; "parse": a Parse, with its statement name ("" is unnamed). */
  kind: "query" | "parse";
  name: string;
  sql: string;
}

export interface WireRecorder {
  /** The target's URL, through the recorder. */
  url: string;
  statements(): readonly RecordedStatement[];
  close(): Promise<void>;
}

// Frontend message types (PostgreSQL protocol, "Message Formats").
const QUERY = 0x51; // 'Q'
const PARSE = 0x50; // 'P'

export async function startWireRecorder(targetUrl: string): Promise<WireRecorder> {
  const target = new URL(targetUrl);
  const recorded: RecordedStatement[] = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port || 5432), target.hostname);
    sockets.add(client).add(upstream);
    const read = postgresMessageReader(
      (type, body) => {
        if (type === QUERY) recorded.push({ kind: "query", name: "", sql: cString(body, 0).value });
        if (type === PARSE) {
          const name = cString(body, 0);
          recorded.push({ kind: "parse", name: name.value, sql: cString(body, name.next).value });
        }
      },
      { startupFirst: true },
    );
    client.on("data", (chunk: Buffer) => {
      upstream.write(chunk);
      read(chunk);
    });
    upstream.on("data", (chunk) => client.write(chunk));
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on("close", end).on("error", end);
    upstream.on("close", end).on("error", end);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const proxied = new URL(targetUrl);
  proxied.hostname = "127.0.0.1";
  proxied.port = String((server.address() as net.AddressInfo).port);
  return {
    url: proxied.toString(),
    statements: () => recorded,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function cString(buffer: Buffer, start: number): { value: string; next: number } {
  const end = buffer.indexOf(0, start);
  return { value: buffer.toString("utf8", start, end), next: end + 1 };
}

/**
 * What a transaction-mode pooler cannot carry from one transaction to the
 * next: a statement that sets session state, or takes a lock that outlives
 * its transaction. SET LOCAL and SET TRANSACTION end with the transaction.
 */
export const SESSION_STATE_STATEMENTS = [
  /^\s*SET\s+(?!LOCAL\b|TRANSACTION\b)/i,
  /^\s*RESET\b/i,
  /\bpg_(try_)?advisory_lock(_shared)?\s*\(/i,
  /^\s*(LISTEN|UNLISTEN|PREPARE|DEALLOCATE|DISCARD)\b/i,
  /^\s*DECLARE\b[\s\S]*\bWITH\s+HOLD\b/i,
  /\bCREATE\s+(GLOBAL\s+|LOCAL\s+)?TEMP(ORARY)?\s+TABLE\b/i,
  /\bset_config\s*\([^)]*,\s*false\s*\)/i,
];
