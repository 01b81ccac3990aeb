/**
 * A child of a "launcher" whose SIGTERM handling never finishes, as a
 * graceful close can hang on a connection that stays open: it follows the
 * launcher (ONCEPAY_LAUNCHER_PID) and must still exit once that is gone.
 * Run by lib/process/follow-launcher.test.ts.
 */
import { stopWhenLauncherEnds } from "../process/follow-launcher.ts";

process.on("SIGTERM", () => console.log("SIGTERM, and a close that never ends"));
setInterval(() => undefined, 1000); // what keeps it alive: a handle nobody closes
stopWhenLauncherEnds("ignores-sigterm");
console.log("ready");
