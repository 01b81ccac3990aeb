import { z } from "zod";

/**
 * The one place that reads process.env on the server. Everything is validated
 * once, on first use (not at import, so `next build` needs no database), and a
 * bad value stops the server with a message that names the variable.
 */
const serverEnvSchema = z.object({
  DATABASE_URL: z
    .string({
      error:
        "DATABASE_URL is not set. Start the app with `npm start`, which provides an embedded database, or point it at a PostgreSQL server.",
    })
    .regex(/^postgres(ql)?:\/\//, "DATABASE_URL must be a postgres:// or postgresql:// URL"),
  // Where a session of its own is needed (the migration runner's advisory
  // lock): PostgreSQL itself when DATABASE_URL is a pooler in transaction
  // mode (PgBouncer), which hands the server session to another client after
  // every transaction. Unset: DATABASE_URL is PostgreSQL itself.
  DIRECT_DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, "DIRECT_DATABASE_URL must be a postgres:// or postgresql:// URL")
    .optional(),
  // How the hot path's statements go to the server (lib/db/statements.ts):
  // "prepared" once per connection, or "unnamed", as a pooler in
  // transaction mode and the embedded database need. Unset: unnamed when
  // DIRECT_DATABASE_URL is set (DATABASE_URL is then such a pooler),
  // prepared otherwise. The launcher sets unnamed for the embedded database.
  DATABASE_STATEMENTS: z.enum(["prepared", "unnamed"]).optional(),
  // Must not exceed the embedded database's connection slots (the launcher sets both).
  DATABASE_POOL_MAX: z.coerce.number().int().min(1).max(200).default(10),
  // How long a completed key replays its stored response. Stripe keeps keys for
  // 24 hours; clients must stop retrying well inside this window.
  IDEMPOTENCY_TTL_SECONDS: z.coerce
    .number()
    .int()
    .min(60)
    .default(24 * 60 * 60),
  // How long one attempt may hold a key before another may take it over. Longer
  // than the slowest expected payment; short enough that a crashed attempt's key
  // becomes usable again within a retry budget.
  IDEMPOTENCY_LEASE_SECONDS: z.coerce.number().int().min(1).max(3600).default(30),
  // A request whose key another attempt holds may ask to wait for it
  // (Prefer: wait=N): for at most this long (0: nobody waits), and at most
  // this many at once per instance (past it, 409 at once).
  KEY_WAIT_MAX_SECONDS: z.coerce.number().int().min(0).max(60).default(10),
  KEY_WAIT_MAX_WAITERS: z.coerce.number().int().min(0).max(100_000).default(1000),
  // Whether one connection per instance LISTENs for other instances' key
  // changes (to DIRECT_DATABASE_URL, else DATABASE_URL: never a pooler in
  // transaction mode). Off on the embedded database (one process), where
  // an instance's own commits wake its waiters; the launcher sets it.
  KEY_LISTENER: z.enum(["on", "off"]).default("on"),
  // Which idempotency store runs the checkout: `sql` (plain SQL, one
  // statement per step) or `prisma` (the ORM and an interactive transaction).
  // Both pass one contract suite; docs/stores.md says which to copy when.
  IDEMPOTENCY_STORE: z.enum(["sql", "prisma"]).default("sql"),
  // The recovery worker: how often it looks for keys whose attempt died, and
  // how many it handles per run. 0 switches it off (tests drive it directly).
  RECOVERY_INTERVAL_SECONDS: z.coerce.number().int().min(0).default(10),
  RECOVERY_BATCH_SIZE: z.coerce.number().int().min(1).max(10_000).default(100),
  // Keys the worker resumes at once (each waits on the provider); keep it
  // well below DATABASE_POOL_MAX so live checkouts still get connections.
  RECOVERY_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(4),
  // The reaper: how often it deletes expired keys, and in what batches.
  REAPER_INTERVAL_SECONDS: z.coerce.number().int().min(0).default(300),
  REAPER_BATCH_SIZE: z.coerce.number().int().min(1).max(100_000).default(1000),
  REAPER_MAX_BATCHES: z.coerce.number().int().min(1).default(10),
  // Lets a request ask for a failure at a named point (see lib/faults.ts).
  // For tests and demos only; never enable it where real money moves.
  DEMO_FAULTS: z.enum(["on", "off"]).default("off"),
  // Lets the `crash-*` faults kill the server process (the crash matrix).
  // Apart from DEMO_FAULTS because with it any caller can stop the server:
  // only the test harness turns it on, and nothing turns it on by default.
  CRASH_FAULTS: z.enum(["on", "off"]).default("off"),
  // The payment provider: Stripe's API through its SDK, at the local payment
  // simulator when PAYMENT_SIMULATOR_URL is set (the launcher starts one and
  // sets both), else at Stripe itself. Test-mode keys only: this is a demo.
  STRIPE_SECRET_KEY: z
    .string({
      error:
        "STRIPE_SECRET_KEY is not set. Start the app with `npm start`, which runs the local payment simulator, or set a Stripe test-mode key.",
    })
    .regex(
      /^(sk|rk)_test_/,
      "STRIPE_SECRET_KEY must be a Stripe test-mode key (sk_test_…): OncePay never charges real cards",
    ),
  PAYMENT_SIMULATOR_URL: z.url({ protocol: /^https?$/ }).optional(),
  // The simulator's admin key, which the launcher gives the app only with
  // DEMO_FAULTS=on: the "Duplicate webhooks" demo asks the simulator to
  // deliver an event again. Unset: that demo is unavailable.
  SIMULATOR_ADMIN_KEY: z.string().min(32).optional(),
  // What POST /api/webhooks/stripe checks each event's Stripe-Signature
  // with. The launcher makes one and gives it to the simulator too; with
  // Stripe itself it is the endpoint's signing secret. Unset: the endpoint
  // refuses every event (503), and pending payments wait for the recovery worker.
  STRIPE_WEBHOOK_SECRET: z
    .string()
    .regex(
      /^whsec_[A-Za-z0-9_+/=-]{16,}$/,
      "STRIPE_WEBHOOK_SECRET must be a whsec_… signing secret",
    )
    .optional(),
  // The shop's address as shoppers' browsers reach it: where the bank's
  // 3-D Secure page sends them back. The launcher sets it from PORT; unset,
  // a card that asks for authentication cannot pay.
  PUBLIC_URL: z.url({ protocol: /^https?$/ }).optional(),
  // The recovery worker asks the provider about a payment still pending
  // (3-D Secure asked, no event arrived) once it is this old, and settles
  // it; it stops asking after a day (a shopper who never authenticates).
  PENDING_PAYMENT_SETTLE_AFTER_SECONDS: z.coerce.number().int().min(0).max(86_400).default(120),
  LOG_LEVEL: z.enum(["debug", "info", "warn", "error", "silent"]).default("info"),
  // Rate limits, counted in PostgreSQL so that all instances share them,
  // per window of RATE_LIMIT_WINDOW_SECONDS; 0 switches one off.
  // Checkouts (POST /api/orders) per account: Stripe allows 100 requests a
  // second in live mode, and this is that over a minute, so a storm of a few
  // hundred (the lab's, the tests') passes and a runaway client does not.
  CHECKOUT_RATE_LIMIT: z.coerce.number().int().min(0).default(6000),
  // New API accounts (POST /api/accounts) per client address.
  ACCOUNT_RATE_LIMIT: z.coerce.number().int().min(0).default(600),
  // Lookups at the payment provider (a search, a list of charges or of
  // refunds) that one account's reads may make: the lab's storm reports and
  // list, the key inspector, the ledger page. The provider is the shop's,
  // shared with every checkout, and past its own rate limit it refuses
  // checkouts too. The ledger's largest page (100 orders: a lookup for their
  // charges and one for each paid order's refunds, 200 at most) fits in a
  // window; the default page (20 orders, 40 lookups) seven times.
  PROVIDER_READ_RATE_LIMIT: z.coerce.number().int().min(0).default(300),
  // Requests to the strategy lab's endpoints per account (starting a storm,
  // its reports, the lab's own strategies, each of which charges the
  // provider): the largest storm (200) at each of its six strategies in one
  // window, with their reports (about 1,220 requests), fits; a script that
  // fires storms without end does not.
  LAB_RATE_LIMIT: z.coerce.number().int().min(0).default(1500),
  RATE_LIMIT_WINDOW_SECONDS: z.coerce.number().int().min(1).max(3600).default(60),
  // Proxies in front of the app that append to X-Forwarded-For (the
  // cluster's balancer is one): the client's address is the entry the
  // outermost appended, so what a caller forges before it is ignored.
  TRUSTED_PROXIES: z.coerce.number().int().min(0).max(10).default(0),
  // The largest storm the strategy lab may fire (2, 10, 50, 200 are offered
  // up to it). The launcher makes it 50 on the embedded database, where every
  // statement waits for the one before and a storm of 200 only takes long.
  LAB_MAX_STORM_SIZE: z.coerce.number().int().min(2).max(1000).default(200),
  // The key stores of the designs the lab copies: unset, the app starts its
  // own on first use (dynalite; Debian's redis-server). Set, the same code
  // talks to that DynamoDB (AWS credentials and region from the SDK's usual
  // chain) or Redis.
  LAB_DYNAMODB_ENDPOINT: z.url({ protocol: /^https?$/ }).optional(),
  LAB_REDIS_URL: z
    .string()
    .regex(/^rediss?:\/\//, "LAB_REDIS_URL must be a redis:// or rediss:// URL")
    .optional(),
  // How long the copied designs keep a key, and so how long a key left
  // IN_PROGRESS by a crash blocks its retries: 24 h in the guides they come
  // from, 20 s in the lab so that what follows shows in seconds.
  LAB_KEY_EXPIRY_SECONDS: z.coerce.number().int().min(5).max(86_400).default(20),
});

export type ServerEnv = z.infer<typeof serverEnvSchema>;
export type LogLevel = ServerEnv["LOG_LEVEL"];

/** The log level alone: logging must work even when the rest of the configuration is invalid. */
export function configuredLogLevel(): LogLevel {
  return serverEnvSchema.shape.LOG_LEVEL.catch("info").parse(process.env.LOG_LEVEL);
}

/**
 * Whether this is the development server (the launcher sets NODE_ENV for `npm run dev`). Apart
 * from serverEnv() because proxy.ts needs it on every page load and must not
 * depend on the rest of the configuration.
 */
export function isDevelopment(): boolean {
  return process.env.NODE_ENV === "development";
}

/**
 * The key that signs browser sessions: proxy.ts mints them, the API and the
 * pages accept only what it signed. The launcher sets SESSION_SECRET (the
 * given one, or one it made once and keeps in .data/session-secret), so
 * every instance of a deployment agrees. Apart from serverEnv() for the
 * reason isDevelopment() is.
 */
export function sessionSecret(): string {
  const secret = process.env.SESSION_SECRET;
  if (!secret || secret.length < MIN_SESSION_SECRET_LENGTH) {
    throw new Error(
      `SESSION_SECRET must be set, at least ${MIN_SESSION_SECRET_LENGTH} characters (npm start and npm run cluster set it).`,
    );
  }
  return secret;
}

export const MIN_SESSION_SECRET_LENGTH = 32;

let cached: ServerEnv | undefined;

export function serverEnv(): ServerEnv {
  if (cached) return cached;
  const parsed = serverEnvSchema.safeParse(process.env);
  if (!parsed.success) {
    const problems = parsed.error.issues
      .map((issue) => `  ${issue.path.join(".")}: ${issue.message}`)
      .join("\n");
    throw new Error(`Invalid server configuration:\n${problems}`);
  }
  cached = parsed.data;
  return cached;
}

/**
 * The key of the payment simulator's admin API (/_simulator/*), for the
 * simulator the launcher or the cluster starts. Unset: made once and kept in
 * SIMULATOR_ADMIN_KEY_FILE, where tests and tools read it. The simulator
 * checks the key's form itself (lib/payments/simulator/env.ts) and refuses
 * to start without a good one.
 */
const simulatorAdminKeyEnv = {
  SIMULATOR_ADMIN_KEY: z.string().min(32).optional(),
  SIMULATOR_ADMIN_KEY_FILE: z.string().min(1).default(".data/simulator-admin-key"),
};

/**
 * What the launcher (scripts/launch.mts) reads before Next.js starts. With no
 * DATABASE_URL it starts the embedded database and passes its URL on.
 */
const launcherEnvSchema = z.object({
  DATABASE_URL: z.string().min(1).optional(),
  // Migrations go here when DATABASE_URL is a pooler (see serverEnv).
  DIRECT_DATABASE_URL: z.string().min(1).optional(),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOSTNAME: z.string().default("127.0.0.1"),
  EMBEDDED_DATA_DIR: z.string().default(".data/pglite"),
  DATABASE_POOL_MAX: z.coerce.number().int().min(1).max(200).default(10),
  // Tests and tools read the resolved database URL from here (the embedded
  // database's port is only known once it listens).
  DATABASE_URL_FILE: z.string().min(1).optional(),
  // Unset means: on for the embedded database (a local demo), off otherwise.
  DEMO_FAULTS: z.enum(["on", "off"]).optional(),
  // Unset: the launcher starts the payment simulator and points the app at
  // it. STRIPE_SECRET_KEY alone: Stripe's test mode. Both: that simulator.
  STRIPE_SECRET_KEY: z.string().min(1).optional(),
  PAYMENT_SIMULATOR_URL: z.url({ protocol: /^https?$/ }).optional(),
  // Where the simulator the launcher starts listens; 0 picks a free port.
  SIMULATOR_PORT: z.coerce.number().int().min(0).max(65535).default(0),
  ...simulatorAdminKeyEnv,
  // Unset means: 50 on the embedded database, the app's own default (200) otherwise.
  LAB_MAX_STORM_SIZE: z.coerce.number().int().min(2).max(1000).optional(),
  // Signs browser sessions (see sessionSecret). Unset: made once and kept in SESSION_SECRET_FILE.
  SESSION_SECRET: z.string().min(32).optional(),
  SESSION_SECRET_FILE: z.string().default(".data/session-secret"),
  // Signs the simulator's webhooks, checked by the shop. Unset: made once
  // (whsec_ and the kept secret) and kept in STRIPE_WEBHOOK_SECRET_FILE.
  STRIPE_WEBHOOK_SECRET: z.string().min(1).optional(),
  STRIPE_WEBHOOK_SECRET_FILE: z.string().default(".data/stripe-webhook-secret"),
  // The shop's address for browsers (see serverEnv). Unset: http://HOSTNAME:PORT.
  PUBLIC_URL: z.url({ protocol: /^https?$/ }).optional(),
});

export type LauncherEnv = z.infer<typeof launcherEnvSchema>;

export function launcherEnv(): LauncherEnv {
  return launcherEnvSchema.parse(process.env);
}

/**
 * What `npm run cluster` (scripts/cluster.mts) reads. It needs a real
 * PostgreSQL server: PgBouncer cannot sit in front of the embedded database.
 */
const clusterEnvSchema = z.object({
  DATABASE_URL: z
    .string({
      error:
        "npm run cluster needs a PostgreSQL server: set DATABASE_URL (e.g. postgresql://postgres@127.0.0.1:5432/oncepay). The embedded database runs in one process and serves one session at a time, so several instances and a connection pooler in front of it would prove nothing.",
    })
    .regex(/^postgres(ql)?:\/\//, "DATABASE_URL must be a postgres:// or postgresql:// URL"),
  // Where the app's tables live: the PostgreSQL server DATABASE_URL names
  // ("server"), or three PostgreSQL nodes under Patroni started with the
  // cluster ("patroni"; DATABASE_URL then keeps only the payment simulator's
  // ledger, which stands for Stripe and does not fail over with ours).
  CLUSTER_DATABASE: z.enum(["server", "patroni"]).default("server"),
  // App instances behind the balancer.
  CLUSTER_SIZE: z.coerce.number().int().min(1).max(16).default(3),
  // Where the balancer listens, the one address clients use.
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  // The same over HTTPS and HTTP/2 (a certificate made at start), where a
  // browser has a whole lab storm in flight at once.
  TLS_PORT: z.coerce.number().int().min(0).max(65535).default(3443),
  // PgBouncer's server connections: all PostgreSQL sees of the cluster. A
  // few per core keeps PostgreSQL busy without making it juggle.
  CLUSTER_POOLER_POOL_SIZE: z.coerce.number().int().min(1).max(500).default(20),
  // Each instance's pool: its connections to PgBouncer, which are cheap.
  DATABASE_POOL_MAX: z.coerce.number().int().min(1).max(200).default(10),
  ...simulatorAdminKeyEnv,
});

export type ClusterEnv = z.infer<typeof clusterEnvSchema>;

export function clusterEnv(): { ok: true; env: ClusterEnv } | { ok: false; problems: string[] } {
  const parsed = clusterEnvSchema.safeParse(process.env);
  if (parsed.success) return { ok: true, env: parsed.data };
  return {
    ok: false,
    problems: parsed.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`),
  };
}
