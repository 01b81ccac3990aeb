/**
 * How OncePay runs one of its TypeScript scripts as a process of its own
 * (the launcher, the payment simulator, the lab's key stores):
 * `node --import tsx <script>`, which is one process.
 *
 * Not through tsx's command-line wrapper: that runs the script in a second
 * process and relays signals to it, and when the script has not
 * acknowledged a signal within about 60 ms (its event loop busy: PGlite
 * starting, a long synchronous stretch) it kills it with SIGKILL. A SIGTERM
 * to the launcher's wrapper thus became a SIGKILL of the launcher, which
 * then forwarded nothing, closed no database, and left its children to
 * notice on their own.
 */
export function typescriptScriptArgs(script: string, ...args: string[]): string[] {
  return ["--import", "tsx", script, ...args];
}
