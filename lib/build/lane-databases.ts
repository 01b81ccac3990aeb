import pg from "pg";
import { ensureDatabase } from "../db/ensure-database";

/**
 * On PostgreSQL, each Vitest lane but the shared one gets a database of its
 * own beside DATABASE_URL's (`<name>_own_app`, `<name>_own_postgres`), made
 * fresh for the run and dropped after it. The apps of those lanes run the
 * recovery worker and the reaper, which take over or delete any key left in
 * flight in their database, and some of their tests count every charge at
 * the payment simulator: in the shared database they would reach the shared
 * lane's keys and counts. The shared lane uses DATABASE_URL itself.
 */
export function laneDatabaseUrl(databaseUrl: string, lane: string): string {
  const url = new URL(databaseUrl);
  const database = decodeURIComponent(url.pathname.slice(1));
  if (!database) throw new Error(`DATABASE_URL names no database: ${databaseUrl}`);
  url.pathname = `/${encodeURIComponent(`${database}_${lane.replaceAll("-", "_")}`)}`;
  return url.toString();
}

/** Makes each of these databases afresh (dropping one a killed run left), from DATABASE_URL's connection. */
export async function makeFresh(databaseUrl: string, laneUrls: readonly string[]): Promise<void> {
  // As the launcher would: a newcomer's DATABASE_URL may name a database the server lacks.
  await ensureDatabase(databaseUrl);
  await onServer(databaseUrl, async (client) => {
    await dropEach(client, laneUrls);
    for (const laneUrl of laneUrls)
      await client.query(`CREATE DATABASE ${client.escapeIdentifier(databaseName(laneUrl))}`);
  });
}

export async function drop(databaseUrl: string, laneUrls: readonly string[]): Promise<void> {
  await onServer(databaseUrl, (client) => dropEach(client, laneUrls));
}

async function dropEach(client: pg.Client, laneUrls: readonly string[]): Promise<void> {
  for (const laneUrl of laneUrls)
    await client.query(
      `DROP DATABASE IF EXISTS ${client.escapeIdentifier(databaseName(laneUrl))} WITH (FORCE)`,
    );
}

function databaseName(url: string): string {
  return decodeURIComponent(new URL(url).pathname.slice(1));
}

async function onServer(url: string, work: (client: pg.Client) => Promise<void>): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await work(client);
  } finally {
    await client.end();
  }
}
