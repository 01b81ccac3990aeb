import net from "node:net";

/**
 * A TCP proxy in front of a service (the database, the payment provider), so
 * a test can make it go away (connections dropped, new ones refused) and
 * come back, without touching the real server other tests share.
 */
export interface OutageProxy {
  /** The service's URL, through the proxy. */
  url: string;
  /** Drops every open connection and refuses new ones. */
  cut(): Promise<void>;
  /** Accepts connections again, on the same port. */
  restore(): Promise<void>;
  close(): Promise<void>;
}

const DEFAULT_PORTS: Record<string, number> = {
  "postgresql:": 5432,
  "postgres:": 5432,
  "http:": 80,
};

export async function startOutageProxy(serviceUrl: string): Promise<OutageProxy> {
  const target = new URL(serviceUrl);
  const sockets = new Set<net.Socket>();
  let server = createServer();
  await listen(server, 0);
  const port = (server.address() as net.AddressInfo).port;

  function createServer() {
    return net.createServer((client) => {
      const upstream = net.connect(
        Number(target.port || DEFAULT_PORTS[target.protocol] || 0),
        target.hostname,
      );
      for (const socket of [client, upstream]) {
        sockets.add(socket);
        socket.on("close", () => sockets.delete(socket));
        socket.on("error", () => {
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream).pipe(client);
    });
  }

  const proxied = new URL(serviceUrl);
  proxied.hostname = "127.0.0.1";
  proxied.port = String(port);

  return {
    url: proxied.toString(),
    async cut() {
      const closed = new Promise((resolve) => server.close(resolve));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
    async restore() {
      server = createServer();
      await listen(server, port);
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      if (server.listening) await new Promise((resolve) => server.close(resolve));
    },
  };
}

function listen(server: net.Server, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve());
  });
}
