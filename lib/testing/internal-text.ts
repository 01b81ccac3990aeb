import { expect } from "vitest";

/**
 * What must never reach a client from a failing dependency: where it runs
 * (an address, a URL, a port), what its driver said (an errno code, a
 * message), our stack, or the settings an operator would change. The
 * client gets a stable problem type and the request id; all of that goes to
 * the log, which `loggedLine` reads back from an app's output.
 */
const INTERNAL_TEXT: readonly [string, RegExp][] = [
  ["an IPv4 address", /\b\d{1,3}(?:\.\d{1,3}){3}\b/],
  ["localhost", /localhost/i],
  ["a URL", /\b(?:https?|postgres(?:ql)?|rediss?):\/\//i],
  ["an errno code", /\bE[A-Z]{4,}\b/],
  ["a stack frame", /\bat .*:\d+:\d+/],
  ["an environment variable", /\b(?:LAB|DATABASE|STRIPE|PAYMENT|AWS)_[A-Z_]+\b/],
  ["a driver's words", /\b(?:connect|socket|getaddrinfo|fetch failed|Prisma)\b/i],
];

/** Fails if `text` (an answer's whole body) carries any internal text, or any of `also` (the port a dependency listens on, its message). */
export function expectNoInternalText(text: string, ...also: string[]): void {
  for (const [what, pattern] of INTERNAL_TEXT)
    expect(text, `the answer carries ${what}: ${text}`).not.toMatch(pattern);
  for (const secret of also)
    expect(text, `the answer carries "${secret}": ${text}`).not.toContain(secret);
}

/**
 * The first JSON log line (pino writes one object a line) in an app's
 * output that `matches`, or undefined. Polled: the line reaches the test
 * through the launcher's pipe, and may arrive after the answer it explains.
 */
export async function loggedLine(
  app: { output(): string },
  matches: (line: Record<string, unknown>) => boolean,
  timeoutMs = 10_000,
): Promise<Record<string, unknown> | undefined> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = logLines(app.output()).find(matches);
    if (found || Date.now() > deadline) return found;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function logLines(output: string): Record<string, unknown>[] {
  return output.split("\n").flatMap((line) => {
    if (!line.startsWith("{")) return [];
    try {
      return [JSON.parse(line) as Record<string, unknown>];
    } catch {
      return [];
    }
  });
}
