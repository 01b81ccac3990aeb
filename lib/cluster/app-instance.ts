import { LAUNCHER_PID_ENV } from "@/lib/process/follow-launcher";
import { startProcess, waitUntil, type GroupProcess } from "@/lib/process/process-group";
import { typescriptScriptArgs } from "@/lib/process/typescript-script";

/**
 * One stateless app instance of the cluster: the same launcher as `npm
 * start` (migrations, then `next start`), pointed at the pooler for its
 * queries, at PostgreSQL itself for its migrations, and at the shared
 * payment simulator. It listens on 127.0.0.1 only: clients reach it through
 * the balancer, which is the one proxy it trusts for X-Forwarded-For.
 */
export interface AppInstance {
  readonly name: string;
  readonly port: number;
  readonly url: string;
  readonly process: GroupProcess;
}

export interface AppInstanceOptions {
  name: string;
  port: number;
  /** Through the pooler. */
  databaseUrl: string;
  /** PostgreSQL itself: migrations (a session-level advisory lock). */
  directDatabaseUrl: string;
  paymentSimulatorUrl: string;
  stripeSecretKey: string;
  /** Anything else to set (lease, recovery interval, log level). */
  env: Record<string, string>;
  output: "inherit" | ((chunk: string) => void);
}

const READY_TIMEOUT_MS = 90_000;
// Enough of an instance's last words to say why it did not come up.
const TAIL_CHARS = 4_000;

export async function startAppInstance(options: AppInstanceOptions): Promise<AppInstance> {
  const url = `http://127.0.0.1:${options.port}`;
  // The caller may keep the output only in memory, where a failed start
  // would hide why: the error carries the end of it.
  let tail = "";
  const sink = options.output;
  const output =
    sink === "inherit"
      ? sink
      : (chunk: string) => {
          tail = (tail + chunk).slice(-TAIL_CHARS);
          sink(chunk);
        };
  const started = startProcess({
    command: process.execPath,
    args: typescriptScriptArgs("scripts/launch.mts", "start"),
    env: {
      ...process.env,
      NEXT_TELEMETRY_DISABLED: "1",
      ...options.env,
      PORT: String(options.port),
      HOSTNAME: "127.0.0.1",
      DATABASE_URL: options.databaseUrl,
      DIRECT_DATABASE_URL: options.directDatabaseUrl,
      PAYMENT_SIMULATOR_URL: options.paymentSimulatorUrl,
      STRIPE_SECRET_KEY: options.stripeSecretKey,
      TRUSTED_PROXIES: "1",
      // The instance's launcher stops, with all it started, once the
      // cluster script that started it is gone, however that ended.
      [LAUNCHER_PID_ENV]: String(process.pid),
    },
    output,
  });
  try {
    await waitUntil(async () => (await fetch(`${url}/api/ready`)).ok, {
      timeoutMs: READY_TIMEOUT_MS,
      process: started,
      describe: () => `App instance ${options.name} on port ${options.port} was not ready`,
    });
  } catch (error) {
    await started.stop(); // not ready in time, it may still be running
    if (!tail) throw error;
    throw new Error(`${(error as Error).message}; the end of its output:\n${tail}`, {
      cause: error,
    });
  }
  return { name: options.name, port: options.port, url, process: started };
}
