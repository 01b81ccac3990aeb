/**
 * Next.js calls this once when a server starts. Background work runs only in
 * the Node.js server runtime (NEXT_RUNTIME is set by Next.js itself).
 */
export async function register() {
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  const { stopWhenLauncherEnds } = await import("@/lib/process/follow-launcher");
  stopWhenLauncherEnds("oncepay");
  const { startBackgroundWork } = await import("@/lib/background");
  startBackgroundWork();
}
