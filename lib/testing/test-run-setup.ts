import { beginTestRun } from "@/lib/testing/test-run";

/**
 * The first global setup: the run's folder and mark (lib/testing/test-run.ts),
 * before anything is started, and its end after everything else's teardown.
 */
export default function setup() {
  const run = beginTestRun();
  return () => run.end();
}
