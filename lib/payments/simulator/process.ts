import { spawnService, type ServiceProcess } from "@/lib/process/spawn-service";

/**
 * Runs the payment simulator as its own process (scripts/payment-simulator.mts),
 * the way the app's launcher does: a separate service with its own port that
 * happens to start and stop with the shop.
 */
export interface SimulatorProcess extends ServiceProcess {
  /** The key its admin API takes (the one it was started with). */
  adminKey: string;
}

/**
 * The shop's account at the simulator the launcher starts: the launcher
 * configures the simulator with this key and gives the same key to the app.
 * A fixed key, so the shop's ledger is the same account after a restart.
 */
export const LOCAL_SIMULATOR_SECRET_KEY = "sk_test_oncepay_local_simulator";

const READY_TIMEOUT_MS = 30_000;

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
  /** What its admin API (/_simulator/*) takes: see admin-key.ts. */
  adminKey: string;
  /** Where those keys' events are posted, and the secret that signs them. */
  webhook?: { url: string; secret: string };
}

export async function spawnPaymentSimulator(
  options: SpawnSimulatorOptions,
): Promise<SimulatorProcess> {
  const service = await spawnService({
    name: "The payment simulator",
    script: "scripts/payment-simulator.mts",
    env: {
      DATABASE_URL: options.databaseUrl,
      SIMULATOR_PORT: String(options.port),
      SIMULATOR_HOST: "127.0.0.1",
      ...(options.poolMax !== undefined && { SIMULATOR_POOL_MAX: String(options.poolMax) }),
      SIMULATOR_API_KEYS: options.apiKeys.join(","),
      SIMULATOR_ADMIN_KEY: options.adminKey,
      ...(options.webhook && {
        SIMULATOR_WEBHOOK_URL: options.webhook.url,
        SIMULATOR_WEBHOOK_SECRET: options.webhook.secret,
      }),
    },
    // Whoever starts it (the launcher, a test) is the one it must not outlive.
    follows: process.pid,
    readyTimeoutMs: READY_TIMEOUT_MS,
  });
  return { ...service, adminKey: options.adminKey };
}
