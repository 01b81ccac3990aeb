import { spawn } from "node:child_process";
import path from "node:path";
import { LAUNCHER_PID_ENV } from "@/lib/process/follow-launcher";

/**
 * Runs the payment simulator as its own process (scripts/payment-simulator.mts),
 * the way the app's launcher does: a separate service with its own port that
 * happens to start and stop with the shop.
 */
export interface SimulatorProcess {
  url: string;
  /** Settles when the process ends, with its exit code (null after a signal). */
  exited: Promise<number | null>;
  stop(): Promise<void>;
}

/**
 * The shop's account at the simulator the launcher starts: the launcher
 * configures the simulator with this key and gives the same key to the app.
 * A fixed key, so the shop's ledger is the same account after a restart.
 */
export const LOCAL_SIMULATOR_SECRET_KEY = "sk_test_oncepay_local_simulator";

const READY_TIMEOUT_MS = 30_000;
const LISTENING = /listening on (https?:\/\/\S+)/;

export interface SpawnSimulatorOptions {
  databaseUrl: string;
  port: number;
  /**
   * Its connection pool. On the embedded database ask for 1: its socket
   * server has only a few slots beyond the app's pool, and PGlite runs one
   * statement at a time, so more connections would buy nothing.
   */
  poolMax?: number;
  /** The API keys it accepts (SIMULATOR_API_KEYS): the ones it is started for. */
  apiKeys: readonly string[];
}

export async function spawnPaymentSimulator(options: SpawnSimulatorOptions): Promise<SimulatorProcess> {
  const child = spawn(process.execPath, [path.resolve("node_modules/tsx/dist/cli.mjs"), "scripts/payment-simulator.mts"], {
    stdio: ["ignore", "pipe", "inherit"],
    env: {
      ...process.env,
      DATABASE_URL: options.databaseUrl,
      SIMULATOR_PORT: String(options.port),
      SIMULATOR_HOST: "127.0.0.1",
      ...(options.poolMax !== undefined && { SIMULATOR_POOL_MAX: String(options.poolMax) }),
      SIMULATOR_API_KEYS: options.apiKeys.join(","),
      // Whoever starts it (the launcher, a test) is the one it must not outlive.
      [LAUNCHER_PID_ENV]: String(process.pid),
    },
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  // Its output goes on to ours; the first line says where it listens.
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`The payment simulator did not start within ${READY_TIMEOUT_MS} ms`)), READY_TIMEOUT_MS);
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
      reject(new Error(`The payment simulator exited with code ${code} before it was ready`));
    });
  });

  return {
    url,
    exited,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGTERM");
      await exited;
    },
  };
}
