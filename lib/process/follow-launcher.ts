/**
 * Next.js and the payment simulator are children of the launcher
 * (scripts/launch.mts), which owns the embedded database. A launcher stopped
 * by a signal it can handle stops them itself. One killed outright (SIGKILL,
 * the OOM killer) cannot, and its children would live on: holding the shop's
 * port, so the next `npm start` fails, and serving checkouts with the
 * database gone. So each child also watches the launcher, and stops itself
 * the way a SIGTERM would once the launcher is gone.
 *
 * The launcher's pid comes in the environment rather than from
 * `process.ppid`: Node reads that once at start-up, and a child started
 * through tsx has tsx's own process as its parent, not the launcher.
 */
export const LAUNCHER_PID_ENV = "ONCEPAY_LAUNCHER_PID";

const CHECK_INTERVAL_MS = 1000;
// Next.js answers SIGTERM with a graceful close, which waits on whatever
// holds the server open. With the launcher gone nobody is left to wait for:
// a process still running this long after its SIGTERM exits anyway.
export const FORCED_EXIT_AFTER_MS = 5000;

/** Calls `then` once, when the process `pid` no longer exists. Returns a function that stops watching. */
export function whenProcessEnds(pid: number, then: () => void, intervalMs: number = CHECK_INTERVAL_MS): () => void {
  const timer = setInterval(() => {
    if (isRunning(pid)) return;
    clearInterval(timer);
    then();
  }, intervalMs);
  timer.unref(); // watching never keeps a process alive
  return () => clearInterval(timer);
}

/**
 * In a process the launcher started (ONCEPAY_LAUNCHER_PID set): stop, as on
 * SIGTERM, once the launcher is gone, and for good FORCED_EXIT_AFTER_MS later
 * if the SIGTERM did not stop it. Elsewhere (tests starting a simulator
 * of their own, `next start` run by hand) it does nothing.
 */
export function stopWhenLauncherEnds(name: string, env: NodeJS.ProcessEnv = process.env): void {
  const pid = Number(env[LAUNCHER_PID_ENV]);
  if (!Number.isInteger(pid) || pid <= 0) return;
  whenProcessEnds(pid, () => {
    console.error(`[${name}] the launcher (pid ${pid}) is gone; stopping`);
    setTimeout(() => {
      console.error(`[${name}] still running ${FORCED_EXIT_AFTER_MS} ms after SIGTERM; exiting`);
      process.exit(1);
    }, FORCED_EXIT_AFTER_MS).unref();
    process.kill(process.pid, "SIGTERM");
  });
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0); // signal 0: only asks whether the process exists
    return true;
  } catch (error) {
    // EPERM: it exists, it is just not ours to signal.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
