import { setTimeout as delay } from "node:timers/promises";
import { processesCarrying } from "@/lib/testing/processes";

/**
 * What a fixture tells lib/testing/ownership.test.ts, which runs it: a
 * fact, posted as JSON to the address it was given.
 */
export async function report(fact: Record<string, unknown>): Promise<void> {
  const response = await fetch(process.env.OWNERSHIP_REPORT_URL!, {
    method: "POST",
    body: JSON.stringify(fact),
  });
  await response.body?.cancel();
}

/** The launchers this fixture's run has started so far, once there is one (they carry the run's probe). */
export async function launchersStarted(): Promise<number[]> {
  for (;;) {
    const launchers = processesCarrying("OWNERSHIP_PROBE", process.env.OWNERSHIP_PROBE!).filter(
      (running) => running.commandLine.includes("scripts/launch.mts"),
    );
    if (launchers.length > 0) return launchers.map((launcher) => launcher.pid);
    await delay(50);
  }
}
