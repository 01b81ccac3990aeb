import http from "node:http";

/**
 * Plain node:http, for what fetch cannot express: header fields sent more
 * than once, and a batch of requests that are provably in flight together.
 */
export interface RawRequest {
  method: string;
  path: string;
  headers: http.OutgoingHttpHeaders;
  body?: string;
}

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
  receivedAt: number;
}

export interface OverlappingBatch {
  responses: RawResponse[];
  /** When the last request's body was handed to the socket. */
  lastSentAt: number;
}

/**
 * Opens one connection per request and sends every header first; only when
 * all N connections are open does it finish all N bodies, in one synchronous
 * loop. No response can be read before that loop ends, so when
 * `min(receivedAt) >= lastSentAt` all N were in flight at once.
 */
export async function sendOverlapping(baseUrl: string, requests: RawRequest[]): Promise<OverlappingBatch> {
  const { hostname, port } = new URL(baseUrl);
  const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });
  const pending = requests.map((request) => {
    const outgoing = http.request({ hostname, port, method: request.method, path: request.path, headers: request.headers, agent });
    const connected = new Promise<void>((resolve, reject) => {
      outgoing.once("socket", (socket) => (socket.connecting ? socket.once("connect", () => resolve()) : resolve()));
      outgoing.once("error", reject);
    });
    const response = new Promise<RawResponse>((resolve, reject) => {
      outgoing.once("response", (incoming) => {
        const receivedAt = performance.now();
        const chunks: Buffer[] = [];
        incoming.on("data", (chunk: Buffer) => chunks.push(chunk));
        incoming.on("end", () =>
          resolve({ status: incoming.statusCode ?? 0, headers: incoming.headers, body: Buffer.concat(chunks).toString(), receivedAt }),
        );
        incoming.on("error", reject);
      });
      outgoing.once("error", reject);
    });
    outgoing.flushHeaders();
    return { outgoing, connected, response, body: request.body ?? "" };
  });

  await Promise.all(pending.map((p) => p.connected));
  for (const p of pending) p.outgoing.end(p.body);
  const lastSentAt = performance.now();

  const responses = await Promise.all(pending.map((p) => p.response));
  agent.destroy();
  return { responses, lastSentAt };
}

/** One request, sent as given (repeated header fields included). */
export async function sendRaw(baseUrl: string, request: RawRequest): Promise<RawResponse> {
  const { responses } = await sendOverlapping(baseUrl, [request]);
  return responses[0]!;
}
