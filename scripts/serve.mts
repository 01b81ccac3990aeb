/**
 * OncePay's HTTP server: Next.js behind a front door of our own
 * (lib/http/front-door.ts), which answers what Next.js would answer with a
 * 5xx, a redirect off-site or nothing, drops the request headers that steer
 * Next.js itself, and records the connection's peer, so a forged
 * X-Forwarded-For cannot choose a caller's address. The launcher starts it in place of `next start`
 * or `next dev`, bundled by esbuild (lib/process/server-bundle.ts) and run
 * by plain Node:
 *
 *   node <bundle> start|dev <port> <hostname>
 *
 * On SIGTERM or SIGINT it stops taking connections, lets the requests in
 * progress finish, closes Next.js and exits, as `next start` does; the
 * launcher kills it if that takes too long.
 */
import { createServer, type ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import next from "next";
import {
  dropInternalHeaders,
  expectationFailedAnswer,
  forwardedFor,
  frontDoor,
  unparsableRequestAnswer,
  type FrontDoorAnswer,
} from "../lib/http/front-door.ts";
import { boundServer, SERVER_TIMEOUTS } from "../lib/http/server-limits.ts";

// The launcher has validated its settings (lib/env.ts) and passes these on.
const [mode, port, hostname] = process.argv.slice(2);
if ((mode !== "start" && mode !== "dev") || !/^\d+$/.test(port ?? "") || !hostname) {
  console.error("usage: serve start|dev <port> <hostname>");
  process.exit(2);
}

// As `next start` names its process: ps, the soak's memory probe and the
// shutdown tests find the server by it.
process.title = "next-server (oncepay)";

const app = next({ dev: mode === "dev", hostname, port: Number(port) });
const handle = app.getRequestHandler();
await app.prepare();

function send(response: ServerResponse, { status, headers, body }: FrontDoorAnswer): void {
  response.writeHead(status, { ...headers, "Content-Length": Buffer.byteLength(body) }).end(body);
}

const server = createServer(
  {
    // A flood of connections is shed, not fatal (lib/http/server-limits.ts).
    ...SERVER_TIMEOUTS,
    // Only the development server's hot reload switches protocols (a
    // websocket). Any other Upgrade (h2c, say) is a request like the rest:
    // a client cannot insist on a switch, and Node closed the socket unanswered.
    shouldUpgradeCallback: (request) =>
      mode === "dev" && request.headers.upgrade?.toLowerCase() === "websocket",
  },
  (request, response) => {
    const decision = frontDoor({
      method: request.method ?? "",
      target: request.url ?? "",
      headers: request.headers,
    });
    if (decision.kind === "answer") return send(response, decision.answer);
    request.url = decision.target;
    dropInternalHeaders(request.headers);
    request.headers["x-forwarded-for"] = forwardedFor(
      request.headers["x-forwarded-for"],
      request.socket.remoteAddress,
    );
    handle(request, response).catch((error: unknown) => {
      // Next.js answers its own errors; this is for a bug in it that escapes.
      console.error("[oncepay] Next.js failed to handle a request", error);
      if (!response.headersSent) response.writeHead(500);
      response.end();
    });
  },
);
boundServer(server);
// An Expect other than 100-continue: Node's own 417 is bare.
server.on("checkExpectation", (request, response) =>
  send(response, expectationFailedAnswer(request.headers)),
);
// Node answers bytes it cannot parse with a bare 400 of its own; ours says why, in the API's shape.
// Only the parser's errors (HPE_*); a timeout or a reset closes the connection, as Node's
// handler does, and so does a connection whose earlier answer is already on its way.
server.on(
  "clientError",
  (error: NodeJS.ErrnoException, socket: Duplex & { _httpMessage?: ServerResponse }) => {
    if (!error.code?.startsWith("HPE_") || !socket.writable || socket._httpMessage?.headersSent)
      return void socket.destroy();
    socket.end(unparsableRequestAnswer(error.code));
  },
);
// The development server's hot reload talks over a websocket.
if (mode === "dev") server.on("upgrade", app.getUpgradeHandler());

server.listen(Number(port), hostname, () => {
  console.log(`[oncepay] serving ${mode === "dev" ? "development" : "production"} build`);
  console.log(`[oncepay] listening on http://${hostname}:${port}`);
});

let stopping = false;
for (const [signal, exitCode] of [
  ["SIGTERM", 143],
  ["SIGINT", 130],
] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    server.close(() => void app.close().finally(() => process.exit(exitCode)));
    // Keep-alive connections with no request in progress would hold close() open.
    server.closeIdleConnections();
  });
}
