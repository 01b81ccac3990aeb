/**
 * Why a start-up could not open (or make) its database, as one line that
 * says what to run: start-up scripts print it and exit, without a stack
 * trace (lib/db/ensure-database.ts).
 */
export class DatabaseSetupError extends Error {
  override name = "DatabaseSetupError";
}

export interface ServerAddress {
  host: string;
  port: number;
  user: string | undefined;
}

const UNREACHABLE_CODES = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ETIMEDOUT",
  "ECONNRESET",
]);
// pg's own words when connectionTimeoutMillis passes, or the server hangs up during the handshake.
const UNREACHABLE_MESSAGES = /timeout|connection terminated/i;
const LOGIN_REFUSED_CODES = new Set([
  "28P01", // invalid_password
  "28000", // invalid_authorization_specification: no pg_hba.conf entry, no such role
]);
const CANNOT_CONNECT_NOW = "57P03"; // the server is starting up or shutting down

/** The one-line error for a failure to `doing` (e.g. "open database \"x\"") on `server`. */
export function setupErrorFor(
  error: unknown,
  server: ServerAddress,
  doing: string,
  { hint }: { hint?: string } = {},
): DatabaseSetupError {
  const { code, message } = describeDriverError(error);
  const where = describeServer(server);
  if ((code && UNREACHABLE_CODES.has(code)) || (!code && UNREACHABLE_MESSAGES.test(message)))
    return new DatabaseSetupError(
      `cannot reach PostgreSQL at ${where} (${message}); start it, or point DATABASE_URL at a server that runs`,
    );
  if (code && LOGIN_REFUSED_CODES.has(code))
    return new DatabaseSetupError(
      `PostgreSQL at ${where} refused role "${server.user ?? ""}" (${message}); check the user and password in DATABASE_URL`,
    );
  if (code === CANNOT_CONNECT_NOW)
    return new DatabaseSetupError(
      `PostgreSQL at ${where} does not take connections yet (${message}); start again once it has started`,
    );
  return new DatabaseSetupError(
    `could not ${doing} on ${where}: ${message}${code ? ` (SQLSTATE ${code})` : ""}${hint ? `; ${hint}` : ""}`,
  );
}

export function describeServer({ host, port }: ServerAddress): string {
  return host.startsWith("/") ? `${host} (socket, port ${port})` : `${host}:${port}`;
}

/** A word a POSIX shell reads back as the same string. */
export function shellWord(text: string): string {
  return /^[A-Za-z0-9_./:@%+=-]+$/.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`;
}

/**
 * Code and a one-line message of what pg threw. A connection refused on
 * every address of a name (localhost: ::1 and 127.0.0.1) arrives as an
 * AggregateError with an empty message: its first error says it.
 */
function describeDriverError(error: unknown): { code: string | undefined; message: string } {
  const found = error as { code?: unknown; message?: unknown; errors?: unknown[] };
  const code = typeof found?.code === "string" ? found.code : undefined;
  let message = typeof found?.message === "string" ? found.message : String(error);
  if (!message && Array.isArray(found.errors) && found.errors.length > 0)
    message = describeDriverError(found.errors[0]).message;
  return { code, message: (message || code || "unknown error").replaceAll(/\s+/g, " ").trim() };
}
