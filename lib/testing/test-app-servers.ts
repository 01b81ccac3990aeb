import type { TestContext } from "vitest";
import { startAppServer, type AppServer, type AppServerOptions } from "@/lib/testing/app-server";

/**
 * App servers that belong to one test: each stops when the test ends,
 * passed, failed or timed out, and the test's end waits until it has.
 * Vitest cannot stop a timed-out test's body, which keeps running; it
 * aborts the test's signal instead, so a start in progress stops and a
 * later one refuses, and the next test never meets a server of this one
 * (on a data folder they share, say).
 */
export function appServersOf(
  context: Pick<TestContext, "signal" | "onTestFinished">,
): (options?: Omit<AppServerOptions, "signal">) => Promise<AppServer> {
  const testEnded = new AbortController();
  const signal = AbortSignal.any([context.signal, testEnded.signal]);
  const starts: Promise<AppServer | undefined>[] = [];
  context.onTestFinished(async () => {
    testEnded.abort(new Error("The test that started this app server has ended"));
    // The abort stopped each; this waits until each has (a start in progress settles once it has).
    await Promise.all(starts.map(async (start) => (await start)?.stop()));
  });
  return (options = {}) => {
    const start = startAppServer({ ...options, signal });
    starts.push(start.catch(() => undefined));
    return start;
  };
}
