import { it } from "vitest";
import { startAppServer } from "@/lib/testing/app-server";
import { report } from "@/lib/testing/ownership-fixtures/report";

/** A test whose app server is serving when Ctrl-C comes (the runner sends SIGINT once it is told). */
it("serves until Ctrl-C", { timeout: 120_000 }, async () => {
  const server = await startAppServer();
  await report({ launchers: [server.processGroup] });
  await new Promise(() => {}); // never settles: Ctrl-C ends the run
});
