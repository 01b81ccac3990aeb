import { describe, expect, it } from "vitest";
import { keepLastLines } from "@/lib/cluster/member-watch";
import { isFatal, withoutAbortedRequests } from "@/lib/cluster/patroni-state";

/** What a node printed while its PostgreSQL could not start and a wait gave up on its REST API (Patroni 3.0.2). */
const NODE_OUTPUT = `2026-12-06 05:52:32.648 UTC [13597] LOG:  could not bind IPv4 address "127.0.0.1": Address already in use
2026-12-06 05:52:32.648 UTC [13597] FATAL:  could not create any TCP/IP sockets
2026-12-06 05:56:21,022 WARNING: Exception happened during processing of request from 127.0.0.1:46252
2026-12-06 05:56:21,026 WARNING: Traceback (most recent call last):
  File "/usr/lib/python3.11/socketserver.py", line 691, in process_request_thread
    self.finish_request(request, client_address)
  File "/usr/lib/python3.11/socketserver.py", line 834, in write
    self._sock.sendall(b)
BrokenPipeError: [Errno 32] Broken pipe
2026-12-06 05:56:21,308 ERROR: postmaster is not running
`;

describe("a Patroni node's last lines", () => {
  it("leave out the tracebacks of REST requests a client gave up on, and keep the rest in order", () => {
    const passedOn: string[] = [];
    const lines = keepLastLines((chunk) => void passedOn.push(chunk), {
      keep: withoutAbortedRequests(),
    });
    // In pieces that split lines, as a pipe delivers them.
    for (let at = 0; at < NODE_OUTPUT.length; at += 37)
      lines.output(NODE_OUTPUT.slice(at, at + 37));

    expect(passedOn.join("")).toBe(NODE_OUTPUT);
    expect(lines.lastLines().split("\n")).toEqual([
      `2026-12-06 05:52:32.648 UTC [13597] LOG:  could not bind IPv4 address "127.0.0.1": Address already in use`,
      "2026-12-06 05:52:32.648 UTC [13597] FATAL:  could not create any TCP/IP sockets",
      "2026-12-06 05:56:21,308 ERROR: postmaster is not running",
    ]);
  });

  it("keep a traceback Patroni prints for itself, and only the last lines asked for", () => {
    const lines = keepLastLines(() => undefined, { limit: 3, keep: withoutAbortedRequests() });
    lines.output(
      "2026-12-06 05:00:00,000 INFO: starting\nTraceback (most recent call last):\n  File \"/usr/bin/patroni\", line 33\nPermissionError: [Errno 13] Permission denied: 'patroni.yml'\n",
    );
    expect(lines.lastLines().split("\n")).toEqual([
      "Traceback (most recent call last):",
      '  File "/usr/bin/patroni", line 33',
      "PermissionError: [Errno 13] Permission denied: 'patroni.yml'",
    ]);
  });
});

describe("Patroni's states", () => {
  it("count as given up only those it does not leave by itself", () => {
    expect(["start failed", "initdb failed", "restart failed (running)"].map(isFatal)).toEqual([
      true,
      true,
      true,
    ]);
    expect(["running", "starting", "crashed", "stopped", "creating replica"].map(isFatal)).toEqual([
      false,
      false,
      false,
      false,
      false,
    ]);
  });
});
