/**
 * A child of a "launcher" that uses up its file descriptors, as a server
 * does under a flood of connections: it follows the launcher
 * (ONCEPAY_LAUNCHER_PID), opens files until none is left and keeps taking
 * any that comes free, over several of the watch's looks at /proc (each of
 * which then fails with EMFILE), and exits 0 if the watch has not stopped
 * it by then. Run, with a
 * low `ulimit -n`, by lib/process/follow-launcher.test.ts.
 */
import { closeSync, openSync } from "node:fs";
import { stopWhenLauncherEnds } from "../process/follow-launcher.ts";

const HOLD_MS = 3_000;

process.on("SIGTERM", () => {
  console.log("stopped by its watch");
  process.exit(143);
});
stopWhenLauncherEnds("follows-without-descriptors");

// As new connections do under a flood, take every descriptor that comes
// free (the runtime closes some of its own now and then), all the time.
const held: number[] = [];
let firstRefusal: string | undefined;
const takeAll = () => {
  try {
    for (;;) held.push(openSync("/dev/null", "r"));
  } catch (error) {
    firstRefusal ??= (error as NodeJS.ErrnoException).code;
  }
};
takeAll();
console.log(`out of descriptors (${firstRefusal}) after ${held.length}`);
const flood = setInterval(takeAll, 10);
setTimeout(() => {
  clearInterval(flood);
  for (const descriptor of held) closeSync(descriptor);
  console.log("held them all; still following");
  process.exit(0);
}, HOLD_MS);
