import type { PatroniNode } from "@/lib/cluster/patroni-node";

/**
 * What says that a Patroni node will not come up by itself, for the waits
 * in lib/cluster/patroni.ts: the state Patroni reports for its PostgreSQL,
 * and its output, without the noise those waits cause.
 */

/**
 * PostgreSQL's states in which Patroni has given up on it (Patroni 3.0's
 * words). "start failed": the postmaster exited while starting. Patroni
 * tries again every loop, but what stopped it (a file it cannot read, a
 * port taken, a bad setting) is still there, so waiting only hides it.
 * Not "crashed": Patroni restarts a PostgreSQL that died, and that is
 * what a failover test's killed node goes through.
 */
export function isFatal(state: string): boolean {
  return (
    state === "start failed" ||
    state === "initdb failed" ||
    state === "custom bootstrap failed" ||
    state.startsWith("restart failed")
  );
}

/** The node's PostgreSQL state as its own Patroni reports it; undefined when it does not answer. */
export async function patroniState(node: PatroniNode): Promise<string | undefined> {
  const answer = await fetch(`${node.restUrl}/patroni`, {
    signal: AbortSignal.timeout(1000),
  }).catch(() => undefined);
  if (answer === undefined) return undefined;
  const body = (await answer.json().catch(() => undefined)) as { state?: unknown } | undefined;
  return typeof body?.state === "string" ? body.state : undefined;
}

/**
 * A line filter for a node's last lines, leaving out the tracebacks Patroni
 * prints when a client gave up on its REST API before the answer ("Exception
 * happened during processing of request from …", then the traceback, then
 * "BrokenPipeError: …"). The waits here give up on a slow answer after a
 * second, as a node starting PostgreSQL gives, and those tracebacks would
 * push out what says why the node is not up.
 */
export function withoutAbortedRequests(): (line: string) => boolean {
  let inTraceback = false;
  return (line) => {
    if (line.includes("Exception happened during processing of request from")) {
      inTraceback = true;
      return false;
    }
    if (!inTraceback) return true;
    // Its lines: Patroni's "WARNING: Traceback …" record, then indented frames.
    if (/^\s/.test(line) || line.includes("Traceback (most recent call last)")) return false;
    inTraceback = false;
    // Its last line names the exception; anything else is the next record.
    return !/^[\w.]+(Error|Exception)\b/.test(line);
  };
}
