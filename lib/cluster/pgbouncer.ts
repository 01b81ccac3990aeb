import { randomBytes } from "node:crypto";
import { chown, mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import pg from "pg";
import { assertPostgresCanUse } from "@/lib/cluster/postgres-access";
import { postgresIds, POSTGRES_USER, runsAsRoot } from "@/lib/process/postgres-user";
import { startProcess, waitUntil, type GroupProcess } from "@/lib/process/process-group";

/**
 * PgBouncer in transaction pooling mode between the app instances and
 * PostgreSQL: every instance's pool connects to it, and it lends each
 * transaction one of `poolSize` server connections, so PostgreSQL sees
 * `poolSize` connections however many instances there are.
 *
 * What transaction mode takes away: a server session belongs to a client
 * only for one transaction. Session state (SET, session advisory locks,
 * LISTEN, temporary tables) and named prepared statements do not survive
 * from one transaction to the next, and PgBouncer 1.18 does not carry
 * prepared statements over (1.21 can). OncePay sends none (a test watches
 * the wire to keep it so), and what needs a session, the migration runner's
 * advisory lock, goes to PostgreSQL directly (DIRECT_DATABASE_URL).
 *
 * Clients authenticate: SCRAM-SHA-256 against a password made for this
 * pooler and kept in its auth_file, which `url` carries. Anyone else on the
 * machine who can open a TCP connection to its port (another user, a
 * process a browser page tricked) would otherwise be logged in to
 * PostgreSQL as the database entry's user, whatever name they gave.
 */
export interface PgBouncer {
  /** The same database, through the pooler, with the pooler's user and password. */
  readonly url: string;
  readonly port: number;
  /** The running process; replaced by start() after a kill. */
  readonly process: GroupProcess;
  /** Starts it again on the same port (after kill or stop). */
  start(): Promise<void>;
  /** SIGKILL: every client connection drops at once, and new ones are refused. */
  kill(): Promise<void>;
  stop(): Promise<void>;
}

export interface PgBouncerOptions {
  /** PostgreSQL itself. */
  databaseUrl: string;
  port: number;
  /** Server connections per database and user: what PostgreSQL sees. */
  poolSize: number;
  /** Where its configuration is written. Run as root, PgBouncer runs as postgres: this folder becomes theirs, and its parent must let others pass (0711). */
  workDir: string;
  output: "inherit" | ((chunk: string) => void);
}

const READY_TIMEOUT_MS = 15_000;

export async function startPgBouncer(options: PgBouncerOptions): Promise<PgBouncer> {
  const configFile = path.join(options.workDir, "pgbouncer.ini");
  const authFile = path.join(options.workDir, "userlist.txt");
  const user = userOf(options.databaseUrl);
  // The pooler's own, not PostgreSQL's: it stays on this machine, in files only PgBouncer reads.
  const password = randomBytes(24).toString("base64url");
  await mkdir(options.workDir, { recursive: true });
  await writeFile(configFile, pgbouncerConfig({ ...options, authFile }), { mode: 0o600 });
  await writeFile(authFile, `${quoted(user)} ${quoted(password)}\n`, { mode: 0o600 });
  if (runsAsRoot()) {
    const postgres = await postgresIds();
    for (const owned of [options.workDir, configFile, authFile])
      await chown(owned, postgres.uid, postgres.gid);
  }
  await assertPostgresCanUse([
    { what: "PgBouncer's configuration", path: configFile, use: "read" },
    { what: "PgBouncer's auth_file", path: authFile, use: "read" },
  ]);
  const url = pooledUrl(options.databaseUrl, options.port, password);

  const launch = async (): Promise<GroupProcess> => {
    const started = startProcess({
      command: "pgbouncer",
      args: [configFile],
      output: options.output,
      endsWithStarter: true,
      runAsUser: POSTGRES_USER,
    });
    await waitUntil(() => answers(url), {
      timeoutMs: READY_TIMEOUT_MS,
      process: started,
      describe: () => `PgBouncer on port ${options.port} did not answer`,
    });
    return started;
  };

  let current = await launch();
  return {
    url,
    port: options.port,
    get process() {
      return current;
    },
    async start() {
      current = await launch();
    },
    kill: () => current.kill(),
    stop: () => current.stop(),
  };
}

/** The configuration: one database entry, the one DATABASE_URL names, under its own name. */
export function pgbouncerConfig({
  databaseUrl,
  port,
  poolSize,
  authFile,
}: Pick<PgBouncerOptions, "databaseUrl" | "port" | "poolSize"> & { authFile: string }): string {
  const target = new URL(databaseUrl);
  const database = decodeURIComponent(target.pathname.slice(1)) || "postgres";
  const user = userOf(databaseUrl);
  const server = [
    `host=${target.hostname}`,
    `port=${target.port || 5432}`,
    `dbname=${database}`,
    `user=${user}`,
    ...(target.password ? [`password=${decodeURIComponent(target.password)}`] : []),
  ].join(" ");
  return [
    "[databases]",
    `${database} = ${server}`,
    "",
    "[pgbouncer]",
    "listen_addr = 127.0.0.1",
    `listen_port = ${port}`,
    // No Unix socket: the cluster's parts talk over TCP on 127.0.0.1 only.
    "unix_socket_dir =",
    // Clients prove the password in auth_file (SCRAM: it never crosses the
    // wire); PgBouncer then logs in to PostgreSQL as the database entry's user.
    "auth_type = scram-sha-256",
    `auth_file = ${authFile}`,
    "pool_mode = transaction",
    `default_pool_size = ${poolSize}`,
    "max_client_conn = 2000",
    // While PostgreSQL fails over there is no server to lend: try logging in
    // again every second (not every 15), so the new primary serves as soon
    // as it can, and answer a client that waited 5 s with an error (the
    // app's 503 with Retry-After) instead of holding it for 120 s. A
    // checkout may wait twice (its statement, then the release of its
    // claim), and its client should hear back well within 20 s.
    "server_login_retry = 1",
    "query_wait_timeout = 5",
    // Nothing to reset between clients in transaction mode: no session state survives.
    "server_reset_query =",
    // pg sends none of these, but other clients (psql, tools) may.
    "ignore_startup_parameters = extra_float_digits,options",
    "log_connections = 0",
    "log_disconnections = 0",
    "stats_period = 60",
    "",
  ].join("\n");
}

/** A field of auth_file: in double quotes, a quote inside doubled. */
function quoted(text: string): string {
  return `"${text.replaceAll('"', '""')}"`;
}

function userOf(databaseUrl: string): string {
  return decodeURIComponent(new URL(databaseUrl).username) || "postgres";
}

function pooledUrl(databaseUrl: string, port: number, password: string): string {
  const url = new URL(databaseUrl);
  url.hostname = "127.0.0.1";
  url.port = String(port);
  url.username = encodeURIComponent(userOf(databaseUrl));
  url.password = password;
  return url.toString();
}

async function answers(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000 });
  try {
    await client.connect();
    await client.query("SELECT 1");
    return true;
  } finally {
    await client.end().catch(() => undefined);
  }
}
