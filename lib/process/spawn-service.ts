import { spawn } from "node:child_process";
import { LAUNCHER_PID_ENV } from "@/lib/process/follow-launcher";
import { typescriptScriptArgs } from "@/lib/process/typescript-script";

/**
 * Runs one of OncePay's local services (the payment simulator, the lab's key
 * stores) as its own process: a TypeScript script run with tsx that prints
 * `listening on <url>` once it is ready, and stops itself once the process
 * it follows is gone (lib/process/follow-launcher.ts).
 */
export interface ServiceProcess {
  url: string;
  pid: number;
  /** Settles when the process ends, with its exit code (null after a signal). */
  exited: Promise<number | null>;
  stop(): Promise<void>;
}

export interface SpawnServiceOptions {
  /** For messages: "the payment simulator". */
  name: string;
  /** The script, relative to the project: "scripts/payment-simulator.mts". */
  script: string;
  env: Record<string, string>;
  /** The process it must not outlive: its starter, or the launcher that started its starter. */
  follows: number;
  readyTimeoutMs?: number;
}

/** How long a service may take to stop after SIGTERM before it gets SIGKILL. */
export const STOP_GRACE_MS = 3000;

const LISTENING = /listening on (https?:\/\/\S+|redis:\/\/\S+)/;

export async function spawnService({
  name,
  script,
  env,
  follows,
  readyTimeoutMs = 30_000,
}: SpawnServiceOptions): Promise<ServiceProcess> {
  const child = spawn(process.execPath, typescriptScriptArgs(script), {
    stdio: ["ignore", "pipe", "inherit"],
    env: { ...process.env, ...env, [LAUNCHER_PID_ENV]: String(follows) },
  });
  const exited = new Promise<number | null>((resolve) =>
    child.once("exit", (code) => resolve(code)),
  );
  // Its output goes on to ours; a line says where it listens.
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${name} did not start within ${readyTimeoutMs} ms`)),
      readyTimeoutMs,
    );
    child.stdout.on("data", (chunk: Buffer) => {
      process.stdout.write(chunk);
      const match = LISTENING.exec(chunk.toString());
      if (match?.[1]) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited with code ${code} before it was ready`));
    });
  });

  return {
    url,
    pid: child.pid ?? -1,
    exited,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGTERM");
      // A service whose close hangs must not hold up whoever stops it.
      const killed = setTimeout(() => child.kill("SIGKILL"), STOP_GRACE_MS);
      await exited;
      clearTimeout(killed);
    },
  };
}
