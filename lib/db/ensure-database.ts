import pg from "pg";
import {
  DatabaseSetupError,
  describeServer,
  setupErrorFor,
  shellWord,
  type ServerAddress,
} from "@/lib/db/database-setup-error";

/**
 * Makes the database a PostgreSQL URL names, when the server does not have
 * it yet, so that `DATABASE_URL=postgresql://…/oncepay npm start` works on a
 * fresh server as written: the launcher, the cluster and the payment
 * simulator call this before anything else connects. When the database
 * cannot be made (no CREATEDB privilege, no server, a refused login) it
 * throws a DatabaseSetupError whose message is one line saying what to run.
 */
export type EnsuredDatabase =
  | { kind: "existed"; database: string }
  | { kind: "created"; database: string }
  /** Missing at first; a concurrent start-up (another instance) created it first. */
  | { kind: "created-by-another"; database: string };

// Long enough for a server across a network; short enough that a start-up
// pointed at an address nobody answers says so rather than hangs.
const CONNECT_TIMEOUT_MS = 10_000;

// Where CREATE DATABASE is sent from: every server has both; template1 is
// the fallback for a role that may not connect to postgres.
const MAINTENANCE_DATABASES = ["postgres", "template1"] as const;

const INVALID_CATALOG_NAME = "3D000"; // database does not exist
const DUPLICATE_DATABASE = "42P04";
// Two CREATE DATABASE of one name that pass the existence check together:
// the loser trips pg_database's unique index instead of 42P04.
const UNIQUE_VIOLATION = "23505";
const INSUFFICIENT_PRIVILEGE = "42501";

export async function ensureDatabase(url: string): Promise<EnsuredDatabase> {
  const target = clientFor(url);
  // What pg itself connects to (its reading of the URL, then its defaults),
  // so the database made is the one the app then opens.
  const database = target.database ?? target.user ?? "postgres";
  const server: ServerAddress = { host: target.host, port: target.port, user: target.user };

  const opened = await connect(target);
  if (opened.ok) {
    await target.end();
    return { kind: "existed", database };
  }
  if (opened.error.code !== INVALID_CATALOG_NAME)
    throw setupErrorFor(opened.error, server, `open database ${quoted(database)}`);

  const maintenance = await connectToMaintenance(url, server, database);
  try {
    await maintenance.query(`CREATE DATABASE ${maintenance.escapeIdentifier(database)}`);
    return { kind: "created", database };
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === DUPLICATE_DATABASE || code === UNIQUE_VIOLATION)
      return { kind: "created-by-another", database };
    if (code === INSUFFICIENT_PRIVILEGE)
      throw new DatabaseSetupError(
        `database ${quoted(database)} does not exist on ${describeServer(server)}, and role ${quoted(server.user)} may not create databases; create it as a role that may: ${createdbCommand(server, database)}`,
      );
    throw setupErrorFor(error, server, `create database ${quoted(database)}`, {
      hint: `create it yourself: ${createdbCommand(server, database)}`,
    });
  } finally {
    await maintenance.end();
  }
}

/** The first maintenance database the role may open, with the same credentials. */
async function connectToMaintenance(
  url: string,
  server: ServerAddress,
  database: string,
): Promise<pg.Client> {
  const refusals: string[] = [];
  for (const name of MAINTENANCE_DATABASES) {
    const client = clientFor(withDatabase(url, name));
    const opened = await connect(client);
    if (opened.ok) return client;
    const code = (opened.error as { code?: string }).code;
    // Missing, or no CONNECT privilege on it: the other one may do.
    if (code === INVALID_CATALOG_NAME || code === INSUFFICIENT_PRIVILEGE) {
      refusals.push(`${name}: ${opened.error.message}`);
      continue;
    }
    throw setupErrorFor(opened.error, server, `connect to ${name} to create ${quoted(database)}`);
  }
  throw new DatabaseSetupError(
    `database ${quoted(database)} does not exist on ${describeServer(server)}, and role ${quoted(server.user)} may open neither ${MAINTENANCE_DATABASES.join(" nor ")} to create it (${refusals.join("; ")}); create it yourself: ${createdbCommand(server, database)}`,
  );
}

function clientFor(url: string): pg.Client {
  return new pg.Client({ connectionString: url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
}

async function connect(
  client: pg.Client,
): Promise<{ ok: true } | { ok: false; error: Error & { code?: string } }> {
  // A refused connection may still emit 'error' later; without a listener that would crash the process.
  client.on("error", () => undefined);
  try {
    await client.connect();
    return { ok: true };
  } catch (error) {
    return { ok: false, error: error as Error & { code?: string } };
  }
}

/** The same URL (user, password, host, options) naming another database. */
function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

/**
 * What to run instead, as a role that may create databases (a superuser is
 * usually `postgres`), owned by the app's role so its migrations may create
 * tables.
 */
function createdbCommand(server: ServerAddress, database: string): string {
  const owner = server.user && server.user !== "postgres" ? ` -O ${shellWord(server.user)}` : "";
  return `createdb -h ${shellWord(server.host)} -p ${server.port} -U postgres${owner} ${shellWord(database)}`;
}

const quoted = (name: string | undefined) => `"${name ?? ""}"`;
