import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { LAUNCHER_PID_ENV } from "@/lib/process/follow-launcher";
import { freePort } from "@/lib/process/free-port";
import { startProcess, waitUntil } from "@/lib/process/process-group";
import { typescriptScriptArgs } from "@/lib/process/typescript-script";
import { judgeAnswersOf } from "@/lib/testing/judged-apps";

/**
 * Runs the built app as a child process, the way `npm start` does (launcher,
 * migrations, `next start`), so tests talk to it over real HTTP. With
 * DATABASE_URL set it uses that PostgreSQL; otherwise a fresh embedded
 * database in a temporary folder.
 *
 * It belongs to the process that started it: the launcher stops, with all
 * it started, once that process is gone (a Vitest worker ended or killed,
 * lib/process/follow-launcher.ts), and its temporary folder goes when the
 * launcher ends, however it ends (a crash included), not only on stop().
 */
export interface AppServer {
  baseUrl: string;
  databaseUrl: string;
  realPostgres: boolean;
  /**
   * The payment simulator the launcher started for this app (its own process
   * and port), with the admin key the launcher made for it. Throws for an
   * app pointed elsewhere (PAYMENT_SIMULATOR_URL, STRIPE_SECRET_KEY).
   */
  readonly paymentSimulator: { url: string; adminKey: string };
  /** What its POST /api/webhooks/stripe checks signatures with (STRIPE_WEBHOOK_SECRET). */
  webhookSecret: string;
  /** Settles with the exit code when the app's process ends (for crash tests). */
  exited: Promise<number | null>;
  /** The launcher's pid, which is also the process group of Next.js and the simulator. */
  processGroup: number;
  /** What the app has printed so far (its latest 200 chunks). */
  output(): string;
  stop(): Promise<void>;
}

export interface AppServerOptions {
  env?: Record<string, string>;
  /** Keep the embedded database here (so it survives a restart); default: a new temporary folder. */
  embeddedDataDir?: string;
  /** Run on the embedded database even when the tests have a DATABASE_URL (the `npm start` default). */
  embedded?: boolean;
  /** Stops it when aborted, while it starts or after: a test's signal, aborted when the test times out. */
  signal?: AbortSignal;
  /** Starts it under this limit on open files (`ulimit -n`), for the launcher and all it starts. */
  openFilesLimit?: number;
}

/** How long a start may take before it counts as failed; it fails sooner if the launcher exits. */
export const APP_READY_TIMEOUT_MS = 90_000;

export async function startAppServer(options: AppServerOptions = {}): Promise<AppServer> {
  if (!existsSync(path.resolve(".next", "BUILD_ID"))) {
    throw new Error(
      "No production build found. Run `npm run build` first (`npm test` does this for you).",
    );
  }
  options.signal?.throwIfAborted();
  const workDir = await mkdtemp(path.join(tmpdir(), "oncepay-test-"));
  const port = await freePort();
  const simulatorPort = await freePort();
  const databaseUrlFile = path.join(workDir, "database-url");
  const simulatorAdminKeyFile = path.join(workDir, "simulator-admin-key");
  const realPostgres = Boolean(process.env.DATABASE_URL) && !options.embedded;
  const inherited = { ...process.env };
  if (options.embedded) delete inherited.DATABASE_URL;
  // The launcher makes a key of its own and leaves it where this reads it.
  delete inherited.SIMULATOR_ADMIN_KEY;
  // The test signs events of its own with it (the launcher gives it to the simulator too).
  // A restart given the same one (options.env) checks what was signed before it.
  const webhookSecret =
    options.env?.STRIPE_WEBHOOK_SECRET ?? `whsec_${randomBytes(24).toString("base64url")}`;

  const output: string[] = [];
  const launcher = [process.execPath, ...typescriptScriptArgs("scripts/launch.mts", "start")];
  const [command, ...args] =
    options.openFilesLimit === undefined
      ? launcher
      : // exec: the launcher keeps the shell's pid, and so its process group.
        ["bash", "-c", `ulimit -n ${options.openFilesLimit} && exec "$0" "$@"`, ...launcher];
  const child = startProcess({
    command: command!,
    args,
    env: {
      ...inherited,
      PORT: String(port),
      HOSTNAME: "127.0.0.1",
      EMBEDDED_DATA_DIR: options.embeddedDataDir ?? path.join(workDir, "pglite"),
      DATABASE_URL_FILE: databaseUrlFile,
      // Most tests need the demo faults; a test of a server without them
      // passes DEMO_FAULTS: "off" in options.env, which wins.
      DEMO_FAULTS: "on",
      SIMULATOR_PORT: String(simulatorPort),
      SIMULATOR_ADMIN_KEY_FILE: simulatorAdminKeyFile,
      STRIPE_WEBHOOK_SECRET: webhookSecret,
      // Tests run the recovery worker and the reaper themselves, when they
      // choose, so that no background run races a test's own assertions.
      RECOVERY_INTERVAL_SECONDS: "0",
      REAPER_INTERVAL_SECONDS: "0",
      LOG_LEVEL: process.env.LOG_LEVEL ?? "warn",
      NEXT_TELEMETRY_DISABLED: "1",
      // The launcher, and all it starts, must not outlive this process.
      [LAUNCHER_PID_ENV]: String(process.pid),
      ...options.env,
    },
    output: (chunk) => keepOutput(output, chunk),
  });
  // Its files go with it: nothing reads them once it has ended.
  const removed = child.exited.then(() => rm(workDir, { recursive: true, force: true }));
  const stop = async () => {
    await child.stop();
    await removed;
  };
  const onAbort = () => void stop();
  options.signal?.addEventListener("abort", onAbort, { once: true });
  if (options.signal?.aborted) onAbort(); // aborted while the folder and ports were being made
  void removed.then(() => options.signal?.removeEventListener("abort", onAbort));
  const baseUrl = `http://127.0.0.1:${port}`;

  try {
    // Serving: the process answers. Not /api/ready: some tests start an
    // app whose database or payment provider is broken on purpose.
    await waitUntil(async () => (await fetch(`${baseUrl}/api/health`)).ok, {
      timeoutMs: APP_READY_TIMEOUT_MS,
      process: child,
      describe: () => "The app did not serve",
    });
  } catch (error) {
    await stop();
    options.signal?.throwIfAborted();
    throw new Error(`${(error as Error).message}:\n${output.join("")}`);
  }
  options.signal?.throwIfAborted();
  judgeAnswersOf(baseUrl);
  const databaseUrl = (await readFile(databaseUrlFile, "utf8")).trim();
  // Written before the simulator starts, so present once the app serves, if it started one.
  const simulatorAdminKey = await readFile(simulatorAdminKeyFile, "utf8").then(
    (text) => text.trim(),
    (error: NodeJS.ErrnoException) => {
      if (error.code === "ENOENT") return undefined;
      throw error;
    },
  );

  return {
    baseUrl,
    databaseUrl,
    realPostgres,
    get paymentSimulator() {
      if (simulatorAdminKey === undefined)
        throw new Error(
          "This app was given a payment provider (PAYMENT_SIMULATOR_URL or STRIPE_SECRET_KEY): its launcher started no simulator",
        );
      return { url: `http://127.0.0.1:${simulatorPort}`, adminKey: simulatorAdminKey };
    },
    webhookSecret,
    exited: child.exited,
    processGroup: child.pid,
    output: () => output.join(""),
    stop,
  };
}

/** What the app printed, its latest 200 chunks (echoed with APP_LOG=1). */
function keepOutput(lines: string[], chunk: string): void {
  lines.push(chunk);
  if (lines.length > 200) lines.shift();
  if (process.env.APP_LOG === "1") process.stderr.write(chunk);
}
