import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Service } from "./ledger-operation.js";

/**
 * A service over HTTP with Stripe's idempotency (one result per key), in
 * the test's own process, so it outlives the crash servers that call it. It
 * counts calls and effects: "asked twice" is fine, "done twice" is the bug.
 */
export interface FakeService {
  url: string;
  calls: number;
  /** Distinct keys it acted on. */
  effects(): number;
  close(): Promise<void>;
}

export async function startFakeService(): Promise<FakeService> {
  const results = new Map<string, string>();
  const service = {
    url: "",
    calls: 0,
    effects: () => results.size,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  const server: Server = createServer((request, response) => {
    service.calls++;
    const key = request.headers["idempotency-key"];
    if (typeof key !== "string") {
      response.writeHead(400).end();
      return;
    }
    if (!results.has(key)) results.set(key, `receipt-${results.size + 1}`);
    response.writeHead(200, { "Content-Type": "application/json" });
    response.end(JSON.stringify({ receipt: results.get(key) }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  service.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/call`;
  return service;
}

/** The fake service as an operation calls it, over HTTP; a failed call's outcome is unknown. */
export function httpService(url: string): Service {
  return {
    async call(key) {
      const response = await fetch(url, { method: "POST", headers: { "Idempotency-Key": key } });
      if (!response.ok) throw new Error(`The service answered ${response.status}`);
      return ((await response.json()) as { receipt: string }).receipt;
    },
  };
}
