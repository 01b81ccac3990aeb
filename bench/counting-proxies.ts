import http from "node:http";
import net from "node:net";
import { postgresMessageReader } from "../lib/db/protocol-messages.ts";

const READY_FOR_QUERY = 0x5a; // 'Z'

/**
 * Proxies that count what goes through them, to measure round trips per
 * request without touching the app: the app is pointed at the proxy, the
 * proxy at the real service.
 */
export interface CountingProxy {
  url: string;
  /** Round trips so far: HTTP requests, or PostgreSQL queries answered. */
  count(): number;
  close(): Promise<void>;
}

/** An HTTP proxy that counts requests (each SDK call, each payment-provider call, is one). */
export async function countingHttpProxy(target: string): Promise<CountingProxy> {
  const upstream = new URL(target);
  const agent = new http.Agent({ keepAlive: true });
  let requests = 0;
  const server = http.createServer((incoming, outgoing) => {
    requests += 1;
    const forwarded = http.request(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: incoming.method,
        path: incoming.url,
        headers: incoming.headers,
        agent,
      },
      (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(outgoing);
      },
    );
    forwarded.on("error", () => outgoing.destroy());
    incoming.pipe(forwarded);
  });
  const port = await listen(server);
  return {
    url: `http://127.0.0.1:${port}`,
    count: () => requests,
    close: () => closeServer(server, () => agent.destroy()),
  };
}

/**
 * A TCP proxy in front of PostgreSQL that counts ReadyForQuery messages
 * ('Z') from the server: one per query round trip of the simple or the
 * extended protocol (after each Sync), one per connection's start-up.
 */
export async function countingPostgresProxy(
  target: string,
): Promise<CountingProxy & { databaseUrl(fromUrl: string): string }> {
  const upstream = new URL(target);
  let readyForQuery = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const database = net.connect(Number(upstream.port || 5432), upstream.hostname);
    sockets.add(client).add(database);
    const read = postgresMessageReader((type) => {
      if (type === READY_FOR_QUERY) readyForQuery += 1;
    });
    database.on("data", (chunk: Buffer) => {
      read(chunk);
      client.write(chunk);
    });
    client.on("data", (chunk) => database.write(chunk));
    const end = () => {
      client.destroy();
      database.destroy();
    };
    client.on("close", end).on("error", end);
    database.on("close", end).on("error", end);
  });
  const port = await listen(server);
  return {
    url: `postgresql://127.0.0.1:${port}`,
    databaseUrl(fromUrl: string) {
      const proxied = new URL(fromUrl);
      proxied.hostname = "127.0.0.1";
      proxied.port = String(port);
      return proxied.toString();
    },
    count: () => readyForQuery,
    close: () =>
      closeServer(server, () => {
        for (const socket of sockets) socket.destroy();
      }),
  };
}

async function listen(server: net.Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return (server.address() as net.AddressInfo).port;
}

async function closeServer(server: net.Server, dropConnections: () => void): Promise<void> {
  dropConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}
