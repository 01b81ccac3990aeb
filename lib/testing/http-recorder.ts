import http from "node:http";
import type net from "node:net";

/**
 * An HTTP proxy in front of a service (the payment simulator) that records
 * every request it passes on, so a test can count what the app really
 * asked of the service, not what the app says it asked.
 */
export interface HttpRecorder {
  /** The service's URL, through the recorder. */
  url: string;
  /** Every request passed on so far, in order. */
  requests(): readonly RecordedRequest[];
  close(): Promise<void>;
}

export interface RecordedRequest {
  method: string;
  /** The path without its query. */
  path: string;
}

export async function startHttpRecorder(serviceUrl: string): Promise<HttpRecorder> {
  const upstream = new URL(serviceUrl);
  const agent = new http.Agent({ keepAlive: true });
  const recorded: RecordedRequest[] = [];
  const server = http.createServer((incoming, outgoing) => {
    recorded.push({
      method: incoming.method ?? "",
      path: new URL(incoming.url ?? "/", "http://recorder").pathname,
    });
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
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests: () => recorded,
    async close() {
      agent.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
