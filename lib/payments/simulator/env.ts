import { z } from "zod";
import { ADMIN_KEY_RULE, isAdminKey } from "@/lib/payments/simulator/admin-key";
import { isTestApiKey } from "@/lib/payments/simulator/auth";
import { isHostName } from "@/lib/payments/simulator/host-check";
import { parseRetrySchedule } from "@/lib/payments/simulator/retry-schedule";
import { isWebhookSecret, WEBHOOK_SECRET_RULE } from "@/lib/payments/simulator/webhook-endpoints";

/**
 * What `scripts/payment-simulator.mts` reads from the environment. The
 * simulator is a separate service, so it has its own small schema rather
 * than a place in OncePay's lib/env.ts.
 */
const logLevelSchema = z.enum(["debug", "info", "warn", "error", "silent"]).catch("info");

const simulatorEnvSchema = z
  .object({
    DATABASE_URL: z
      .string({
        error:
          "DATABASE_URL is not set. The payment simulator keeps its ledger in PostgreSQL (schema payment_simulator).",
      })
      .regex(/^postgres(ql)?:\/\//, "DATABASE_URL must be a postgres:// or postgresql:// URL"),
    // 12111 is where stripe-mock listens too, so tools that know one find the other.
    SIMULATOR_PORT: z.coerce.number().int().min(0).max(65535).default(12111),
    SIMULATOR_HOST: z.string().min(1).default("127.0.0.1"),
    SIMULATOR_POOL_MAX: z.coerce.number().int().min(1).max(200).default(10),
    // The keys it accepts, comma-separated, each its own account. None is
    // allowed: accounts can also be registered at POST /_simulator/api_keys.
    SIMULATOR_API_KEYS: z
      .string()
      .default("")
      .transform((text) =>
        text
          .split(",")
          .map((key) => key.trim())
          .filter((key) => key !== ""),
      )
      .refine(
        (keys) => keys.every(isTestApiKey),
        "SIMULATOR_API_KEYS must list test-mode keys (sk_test_… or rk_test_…, letters, digits and _), comma-separated",
      ),
    // Names it answers to besides localhost, 127.0.0.1, [::1] and
    // SIMULATOR_HOST, comma-separated (host-check.ts): e.g. the name other
    // containers reach it by. Any other Host is refused (421).
    SIMULATOR_ALLOWED_HOSTS: z
      .string()
      .default("")
      .transform((text) =>
        text
          .split(",")
          .map((name) => name.trim())
          .filter((name) => name !== ""),
      )
      .refine(
        (names) => names.every(isHostName),
        "SIMULATOR_ALLOWED_HOSTS must list host names or addresses ([…] for IPv6), without ports, comma-separated",
      ),
    // What the admin API (/_simulator/*) takes. Required: an admin API open to
    // anyone who can reach the port is one any web page can drive.
    SIMULATOR_ADMIN_KEY: z
      .string({
        error:
          "SIMULATOR_ADMIN_KEY is not set. The admin API (/_simulator/*) needs a key, e.g. SIMULATOR_ADMIN_KEY=$(openssl rand -base64 32).",
      })
      .refine(isAdminKey, `SIMULATOR_ADMIN_KEY must be ${ADMIN_KEY_RULE}`),
    // The address the shopper's browser reaches it by, for the 3-D Secure
    // challenge page's links; unset, the address it listens on.
    SIMULATOR_PUBLIC_URL: z.url({ protocol: /^https?$/ }).optional(),
    // Where the configured keys' accounts' events are posted, and the secret
    // that signs them (Stripe's whsec_…): both or neither.
    SIMULATOR_WEBHOOK_URL: z.url({ protocol: /^https?$/ }).optional(),
    SIMULATOR_WEBHOOK_SECRET: z
      .string()
      .refine(isWebhookSecret, `SIMULATOR_WEBHOOK_SECRET must be ${WEBHOOK_SECRET_RULE}`)
      .optional(),
    // The waits between a delivery's attempts, e.g. "1s,5s,30s,2m"; after the last, it is given up.
    SIMULATOR_WEBHOOK_RETRIES: z
      .string()
      .optional()
      .transform((text, context) => {
        if (text === undefined) return undefined;
        const schedule = parseRetrySchedule(text);
        if (schedule) return schedule;
        context.addIssue({
          code: "custom",
          message:
            'SIMULATOR_WEBHOOK_RETRIES must list waits such as "500ms,2s,1m,1h", comma-separated (at most 20, each under a day)',
        });
        return z.NEVER;
      }),
    // OncePay's name, so that one LOG_LEVEL (the launcher passes its whole
    // environment on) quiets both. A bad value means the default: logging must
    // not be what stops the simulator.
    LOG_LEVEL: logLevelSchema,
  })
  .refine(
    (env) =>
      (env.SIMULATOR_WEBHOOK_URL === undefined) === (env.SIMULATOR_WEBHOOK_SECRET === undefined),
    {
      path: ["SIMULATOR_WEBHOOK_URL"],
      message:
        "SIMULATOR_WEBHOOK_URL and SIMULATOR_WEBHOOK_SECRET go together: set both or neither",
    },
  );

export type SimulatorEnv = z.infer<typeof simulatorEnvSchema>;
export type SimulatorLogLevel = SimulatorEnv["LOG_LEVEL"];

/** The log level alone: a simulator started in code (tests) may have no DATABASE_URL in its environment. */
export function simulatorLogLevel(env: NodeJS.ProcessEnv = process.env): SimulatorLogLevel {
  return logLevelSchema.parse(env.LOG_LEVEL);
}

export function simulatorEnv(env: NodeJS.ProcessEnv = process.env): SimulatorEnv {
  const parsed = simulatorEnvSchema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues
      .map((issue) => `  ${issue.path.join(".")}: ${issue.message}`)
      .join("\n");
    throw new Error(`Invalid payment simulator configuration:\n${problems}`);
  }
  return parsed.data;
}
