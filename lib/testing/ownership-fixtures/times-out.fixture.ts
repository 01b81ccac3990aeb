import { it } from "vitest";
import { startAppServer } from "@/lib/testing/app-server";
import { launchersStarted, report } from "@/lib/testing/ownership-fixtures/report";

/**
 * The worst a test can do: start app servers in a loop that never stops
 * one nor looks at the test's signal, and time out while it goes on.
 */
it("keeps starting app servers, and times out", { timeout: 3000 }, async () => {
  void (async () => {
    for (;;) await startAppServer();
  })();
  await report({ launchers: await launchersStarted() });
  await new Promise(() => {}); // never settles: Vitest times the test out
});
