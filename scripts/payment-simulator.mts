/**
 * Runs the Stripe-compatible payment simulator on its own:
 *
 *   SIMULATOR_ADMIN_KEY=… DATABASE_URL=postgresql://postgres@127.0.0.1:5432/oncepay tsx scripts/payment-simulator.mts
 *
 * SIMULATOR_ADMIN_KEY (required) is what its admin API (/_simulator/*) takes;
 * SIMULATOR_PORT (12111) and SIMULATOR_HOST (127.0.0.1) say where it listens;
 * SIMULATOR_ALLOWED_HOSTS the names it answers to besides the loopback ones;
 * SIMULATOR_POOL_MAX (10) is its connection pool (1 on the embedded database);
 * SIMULATOR_API_KEYS the API keys it accepts, comma-separated (more can be
 * registered at POST /_simulator/api_keys); SIMULATOR_PUBLIC_URL where the
 * shopper's browser reaches its 3-D Secure page; SIMULATOR_WEBHOOK_URL and
 * SIMULATOR_WEBHOOK_SECRET where those keys' events are posted and the
 * secret that signs them; SIMULATOR_WEBHOOK_RETRIES the waits between attempts.
 * It creates the database when the server does not have it, and its tables
 * (schema payment_simulator), on start-up, and stops
 * cleanly on SIGINT/SIGTERM after answering the requests in progress.
 */
import { ensureDatabaseAtStart } from "../lib/db/ensure-database-at-start.ts";
import { simulatorEnv } from "../lib/payments/simulator/env.ts";
import { startPaymentSimulator } from "../lib/payments/simulator/server.ts";
import { stopWhenLauncherEnds } from "../lib/process/follow-launcher.ts";

let env;
try {
  env = simulatorEnv();
} catch (error) {
  console.error(error instanceof Error ? error.message : error);
  process.exit(2);
}

await ensureDatabaseAtStart(env.DATABASE_URL, "[payment-simulator]");
const simulator = await startPaymentSimulator({
  databaseUrl: env.DATABASE_URL,
  port: env.SIMULATOR_PORT,
  host: env.SIMULATOR_HOST,
  poolMax: env.SIMULATOR_POOL_MAX,
  apiKeys: env.SIMULATOR_API_KEYS,
  adminKey: env.SIMULATOR_ADMIN_KEY,
  allowedHosts: env.SIMULATOR_ALLOWED_HOSTS,
  publicUrl: env.SIMULATOR_PUBLIC_URL,
  webhook: env.SIMULATOR_WEBHOOK_URL
    ? { url: env.SIMULATOR_WEBHOOK_URL, secret: env.SIMULATOR_WEBHOOK_SECRET! }
    : undefined,
  webhookDelivery: env.SIMULATOR_WEBHOOK_RETRIES && {
    retryScheduleMs: env.SIMULATOR_WEBHOOK_RETRIES,
  },
});
console.log(
  `[payment-simulator] listening on ${simulator.url} (Stripe API subset; admin under ${simulator.url}/_simulator/; ${env.SIMULATOR_API_KEYS.length} configured API key(s))`,
);

let stopping = false;
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    simulator.close().then(
      () => process.exit(0),
      (error: unknown) => {
        console.error("[payment-simulator] failed to stop cleanly:", error);
        process.exit(1);
      },
    );
  });
}
stopWhenLauncherEnds("payment-simulator");
