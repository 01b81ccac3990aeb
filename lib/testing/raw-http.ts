import http from "node:http";
import net from "node:net";
import { reportAnswer } from "@/lib/testing/answer-observers";

/**
 * Plain node:http, for what fetch cannot express: header fields sent more
 * than once, and a batch of requests that are provably in flight together.
 * And below it, sendWire: bytes on a socket, for what node:http refuses to
 * send (control characters and raw UTF-8 in a header, a Content-Length that
 * lies, Content-Length and chunked together, a method in lower case).
 */
export interface RawRequest {
  method: string;
  path: string;
  headers: http.OutgoingHttpHeaders;
  body?: string;
}

/** A checkout (POST /api/orders) as a raw request: the bearer token, the key and the JSON body. */
export function rawCheckout(token: string, key: string, body: unknown): RawRequest {
  return {
    method: "POST",
    path: "/api/orders",
    headers: {
      Authorization: `Bearer ${token}`,
      "Content-Type": "application/json",
      "Idempotency-Key": key,
    },
    body: JSON.stringify(body),
  };
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
export async function sendOverlapping(
  baseUrl: string,
  requests: RawRequest[],
): Promise<OverlappingBatch> {
  const { hostname, port } = new URL(baseUrl);
  const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });
  const pending = requests.map((request) => {
    const outgoing = http.request({
      hostname,
      port,
      method: request.method,
      path: request.path,
      headers: request.headers,
      agent,
    });
    const connected = new Promise<void>((resolve, reject) => {
      outgoing.once("socket", (socket) =>
        socket.connecting ? socket.once("connect", () => resolve()) : resolve(),
      );
      outgoing.once("error", reject);
    });
    const response = new Promise<RawResponse>((resolve, reject) => {
      outgoing.once("response", (incoming) => {
        const receivedAt = performance.now();
        const chunks: Buffer[] = [];
        incoming.on("data", (chunk: Buffer) => chunks.push(chunk));
        incoming.on("end", () =>
          resolve({
            status: incoming.statusCode ?? 0,
            headers: incoming.headers,
            body: Buffer.concat(chunks).toString(),
            receivedAt,
          }),
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
  responses.forEach((response, index) =>
    reportAnswer(baseUrl, {
      method: requests[index]!.method,
      path: requests[index]!.path,
      ...response,
    }),
  );
  return { responses, lastSentAt };
}

/** One request, sent as given (repeated header fields included). */
export async function sendRaw(baseUrl: string, request: RawRequest): Promise<RawResponse> {
  const { responses } = await sendOverlapping(baseUrl, [request]);
  return responses[0]!;
}

/** A request as bytes: header fields in order, each value a string (sent as Latin-1, one byte a character) or exact bytes. */
export interface WireRequest {
  method: string;
  path: string;
  headers: [name: string, value: string | Buffer][];
  body?: string | Buffer;
  /**
   * Half-closes the connection once the bytes are out, as a client that
   * gives up mid-upload does; the server can still answer on it.
   */
  endAfterSending?: boolean;
}

export interface WireResponse {
  status: number;
  /** Lower-cased names; a field sent more than once is joined with ", ". */
  headers: Record<string, string>;
  body: string;
}

// Far longer than any answer the app gives to one request; a hang is a failure, not a wait.
const WIRE_TIMEOUT_MS = 10_000;

/**
 * Writes the request exactly as given, adding only what a test never means
 * to vary: `Host` and `Connection: close` (so the answer ends with the
 * connection), each unless given, and a true `Content-Length` unless the request sets
 * Content-Length or Transfer-Encoding itself. Reads the first response on
 * the connection; the server answering nothing at all is an error.
 */
export async function sendWire(baseUrl: string, request: WireRequest): Promise<WireResponse> {
  const { hostname, port, host } = new URL(baseUrl);
  const body =
    typeof request.body === "string"
      ? Buffer.from(request.body, "utf8")
      : (request.body ?? Buffer.alloc(0));
  const has = (name: string) => request.headers.some(([field]) => field.toLowerCase() === name);
  const fields: [string, string | Buffer][] = [
    ...(has("host") ? [] : [["Host", host] as [string, string]]),
    ...(has("connection") ? [] : [["Connection", "close"] as [string, string]]),
    ...request.headers,
    ...(has("content-length") || has("transfer-encoding") || body.length === 0
      ? []
      : [["Content-Length", String(body.length)] as [string, string]]),
  ];
  const head = Buffer.concat([
    Buffer.from(`${request.method} ${request.path} HTTP/1.1\r\n`, "latin1"),
    ...fields.map(([name, value]) =>
      Buffer.concat([
        Buffer.from(`${name}: `, "latin1"),
        typeof value === "string" ? Buffer.from(value, "latin1") : value,
        Buffer.from("\r\n"),
      ]),
    ),
    Buffer.from("\r\n"),
  ]);

  const received = await new Promise<Buffer>((resolve, reject) => {
    const socket = net.connect({ host: hostname, port: Number(port) });
    const chunks: Buffer[] = [];
    const timer = setTimeout(
      () =>
        socket.destroy(
          new Error(
            `No complete answer to ${request.method} ${request.path} within ${WIRE_TIMEOUT_MS} ms`,
          ),
        ),
      WIRE_TIMEOUT_MS,
    );
    socket.on("connect", () => {
      socket.write(Buffer.concat([head, body]));
      if (request.endAfterSending) socket.end();
    });
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    // The server may reset a connection it refused while our bytes were still arriving; what it said before counts.
    socket.on("error", (error) => (chunks.length > 0 ? socket.destroy() : reject(error)));
    socket.on("close", () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks));
    });
  });
  if (received.length === 0)
    throw new Error(
      `The server closed the connection without answering ${request.method} ${request.path}`,
    );
  const response = parseResponse(received, request.method === "HEAD");
  reportAnswer(baseUrl, { method: request.method, path: request.path, ...response });
  return response;
}

/** The first HTTP/1.1 response in `bytes`: status line, fields, and a body framed by Content-Length, chunks, or the connection's end. */
function parseResponse(bytes: Buffer, headRequest: boolean): WireResponse {
  const headEnd = bytes.indexOf("\r\n\r\n");
  if (headEnd === -1)
    throw new Error(
      `Not an HTTP response: ${JSON.stringify(bytes.subarray(0, 200).toString("latin1"))}`,
    );
  const [statusLine, ...lines] = bytes.subarray(0, headEnd).toString("latin1").split("\r\n");
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine!)?.[1]);
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(":");
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    headers[name] = name in headers ? `${headers[name]}, ${value}` : value;
  }
  const rest = bytes.subarray(headEnd + 4);
  let body: Buffer;
  if (headRequest || status === 204 || status === 304) body = Buffer.alloc(0);
  else if (headers["transfer-encoding"]?.toLowerCase().includes("chunked")) body = dechunk(rest);
  else if (headers["content-length"] !== undefined)
    body = rest.subarray(0, Number(headers["content-length"]));
  else body = rest;
  return { status, headers, body: body.toString("utf8") };
}

function dechunk(bytes: Buffer): Buffer {
  const parts: Buffer[] = [];
  let offset = 0;
  for (;;) {
    const lineEnd = bytes.indexOf("\r\n", offset);
    if (lineEnd === -1) throw new Error("A chunked response body broke off");
    const size = parseInt(bytes.subarray(offset, lineEnd).toString("latin1"), 16);
    if (size === 0) return Buffer.concat(parts);
    parts.push(bytes.subarray(lineEnd + 2, lineEnd + 2 + size));
    offset = lineEnd + 2 + size + 2;
  }
}

/**
 * A bodiless POST sent from a given local address: on Linux every 127.x.y.z
 * is loopback, so each address is another client to the server.
 */
export function postFrom(
  localAddress: string,
  url: string,
  headers: Record<string, string>,
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const request = http.request(url, { method: "POST", localAddress, headers }, (response) => {
      let body = "";
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => (body += chunk));
      response.on("end", () => {
        const answer = { status: response.statusCode ?? 0, headers: response.headers, body };
        reportAnswer(url, { method: "POST", path: new URL(url).pathname, ...answer });
        resolve(answer);
      });
    });
    request.on("error", reject);
    request.end();
  });
}
