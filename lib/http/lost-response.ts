/**
 * A response that never arrives whole: the status line, the headers and a
 * first byte go out, then the body fails and the server drops the connection,
 * as if the network had lost the rest of the answer. For the "lost response"
 * demo only.
 *
 * Why not fail before the first byte? A browser that sees a reused keep-alive
 * connection close with nothing on it assumes the connection went stale and
 * silently sends the request again, so the page would never see the loss.
 * Once response bytes have arrived the browser cannot do that, and the client
 * gets the network error the demo is about.
 */
export function lostResponse(): Response {
  const encoder = new TextEncoder();
  let sentFirstByte = false;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (!sentFirstByte) {
        sentFirstByte = true;
        controller.enqueue(encoder.encode("{"));
        return;
      }
      controller.error(new Error("response dropped on purpose (demo fault)"));
    },
  });
  return new Response(body, {
    status: 200,
    headers: { "content-type": "application/json", "cache-control": "no-store" },
  });
}
