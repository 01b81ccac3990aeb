import http from "node:http";
import type { AddressInfo } from "node:net";
import { openApiDocument } from "@/lib/openapi/document";

/**
 * A stand-in for an app a test starts: it serves the real OpenAPI document,
 * answers GET /api/health as the document says, and GET /api/teapot with a
 * 418 the document does not have, so the fixtures can show which answers
 * the contract check judges without building and starting the app.
 */
export interface StandInApp {
  baseUrl: string;
  close(): Promise<void>;
}

const DOCUMENT = JSON.stringify(
  openApiDocument({ retentionSeconds: 86400, leaseSeconds: 30, maxWaitSeconds: 10 }),
);

export async function startStandInApp(): Promise<StandInApp> {
  const server = http.createServer((request, response) => {
    const headers = { "Content-Type": "application/json", "X-Request-Id": "stand-in" };
    if (request.url === "/api/openapi.json") response.writeHead(200, headers).end(DOCUMENT);
    else if (request.url === "/api/health")
      response.writeHead(200, headers).end(JSON.stringify({ status: "ok" }));
    else response.writeHead(418, headers).end(JSON.stringify({ status: "teapot" }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
