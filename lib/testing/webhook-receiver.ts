import http from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A webhook endpoint for tests: a real HTTP server that keeps every request
 * it gets (raw body and signature, in arrival order) and answers each with
 * what `answer` says for it (default 200), after `delayMs` if given, so a
 * test can make the endpoint fail, slow or overlapping on purpose.
 */
export interface ReceivedWebhook {
  body: string;
  signature: string | undefined;
  /** The event's id and type, read from the body. */
  id: string;
  type: string;
}

export interface WebhookReceiver {
  url: string;
  received: ReceivedWebhook[];
  /** The most requests it was answering at one moment. */
  maxInFlight: number;
  close(): Promise<void>;
}

export async function startWebhookReceiver(
  options: {
    answer?: (nth: number, webhook: ReceivedWebhook) => number;
    /** How long to wait before answering the nth request. */
    delayMs?: (nth: number) => number;
  } = {},
): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  let inFlight = 0;
  const receiver: WebhookReceiver = { url: "", received, maxInFlight: 0, close: async () => {} };
  const server = http.createServer((request, response) => {
    inFlight += 1;
    receiver.maxInFlight = Math.max(receiver.maxInFlight, inFlight);
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      const event = JSON.parse(body) as { id: string; type: string };
      const webhook = {
        body,
        signature: request.headers["stripe-signature"] as string | undefined,
        id: event.id,
        type: event.type,
      };
      received.push(webhook);
      const nth = received.length;
      const status = options.answer?.(nth, webhook) ?? 200;
      setTimeout(
        () => {
          inFlight -= 1;
          if (response.destroyed) return;
          response.writeHead(
            status,
            status >= 300 && status < 400 ? { Location: "/elsewhere" } : {},
          );
          response.end("ok");
        },
        options.delayMs?.(nth) ?? 0,
      ).unref();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`;
  receiver.close = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  return receiver;
}
