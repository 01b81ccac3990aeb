import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { setTimeout as delay } from "node:timers/promises";

/**
 * A process started in its own process group (an app under test, a part of
 * the cluster: PgBouncer, HAProxy, an app instance), so that stopping or
 * killing it takes whatever it started too (the launcher's Next.js and
 * simulator), and so that Ctrl-C in a terminal reaches only the script that
 * started it, which then stops each part in order.
 */
export interface GroupProcess {
  readonly pid: number;
  /** Settles when it ends: its exit code, or null after a signal. */
  readonly exited: Promise<number | null>;
  /** SIGTERM, then SIGKILL after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
  /** SIGKILL to the whole group: the machine is gone, nothing is cleaned up. */
  kill(): Promise<void>;
}

export interface StartOptions {
  command: string;
  args: readonly string[];
  env?: NodeJS.ProcessEnv;
  /** Where its output goes: a line sink (tests keep it), or the terminal. */
  output: "inherit" | ((chunk: string) => void);
  /**
   * A program that cannot watch its starter (HAProxy, PgBouncer) gets
   * SIGTERM from the kernel when its starter ends, however that ended:
   * util-linux's setpriv sets the parent-death signal, then runs it.
   * Linux only, where the cluster runs; elsewhere it is started as it is.
   */
  endsWithStarter?: boolean;
  /**
   * When started as root, run it as this user instead (PgBouncer refuses
   * root). Switching here rather than in the program matters: a program
   * that changes its own user loses its parent-death signal.
   */
  runAsUser?: string;
}

const SETPRIV = "/usr/bin/setpriv";
const hasSetpriv = process.platform === "linux" && existsSync(SETPRIV);

export function startProcess({
  command,
  args,
  env,
  output,
  endsWithStarter = false,
  runAsUser,
}: StartOptions): GroupProcess {
  const setprivOptions = [
    ...(runAsUser && process.getuid?.() === 0
      ? [`--reuid=${runAsUser}`, `--regid=${runAsUser}`, "--init-groups"]
      : []),
    ...(endsWithStarter ? ["--pdeathsig", "SIGTERM"] : []),
  ];
  if (setprivOptions.length > 0 && hasSetpriv)
    [command, args] = [SETPRIV, [...setprivOptions, "--", command, ...args]];
  const child = spawn(command, args, {
    detached: true,
    // A process run as another user (PostgreSQL under Patroni runs as
    // postgres) starts in "/": the checkout may sit where that user cannot
    // enter (under root's home, or a 0700 folder), and a working directory it
    // cannot enter breaks it in ways that surface only as a timeout.
    ...(runAsUser && { cwd: "/" }),
    env: env ?? process.env,
    stdio: output === "inherit" ? ["ignore", "inherit", "inherit"] : ["ignore", "pipe", "pipe"],
  });
  if (output !== "inherit") {
    child.stdout?.on("data", (chunk: Buffer) => output(chunk.toString()));
    child.stderr?.on("data", (chunk: Buffer) => output(chunk.toString()));
  }
  const exited = new Promise<number | null>((resolve) => {
    child.once("exit", (code) => resolve(code));
    child.once("error", () => resolve(-1));
  });
  if (child.pid === undefined) throw new Error(`${command} could not be started`);
  const pid = child.pid;
  return {
    pid,
    exited,
    async stop(graceMs = 10_000) {
      if (hasEnded(child)) return signalGroup(pid, "SIGKILL"); // its children may not have
      signalGroup(pid, "SIGTERM");
      const killed = delay(graceMs).then(() => signalGroup(pid, "SIGKILL"));
      await Promise.race([exited, killed]);
    },
    async kill() {
      signalGroup(pid, "SIGKILL");
      await exited;
    },
  };
}

function hasEnded(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // Nobody left in the group.
  }
}

/** Polls `ready` until it resolves true, or fails with what `describe` says once `timeoutMs` has passed or the process ended. */
export async function waitUntil(
  ready: () => Promise<boolean>,
  {
    timeoutMs,
    process: watched,
    describe,
  }: { timeoutMs: number; process?: GroupProcess; describe: () => string },
): Promise<void> {
  let ended = false;
  void watched?.exited.then(() => (ended = true));
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline && !ended) {
    if (await ready().catch(() => false)) return;
    await delay(100);
  }
  throw new Error(`${describe()}${ended ? " (it exited)" : ` (not ready within ${timeoutMs} ms)`}`);
}
