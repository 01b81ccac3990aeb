/**
 * A response that never arrives: its body fails before the first byte, so
 * the server closes the connection without sending a status line, as if the
 * network had dropped the answer. For the "lost response" demo only.
 */
export function lostResponse(): Response {
  const body = new ReadableStream({
    start(controller) {
      controller.error(new Error("response dropped on purpose (demo fault)"));
    },
  });
  return new Response(body, { status: 200 });
}
