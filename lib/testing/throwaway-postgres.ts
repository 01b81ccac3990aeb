import { execFile } from "node:child_process";
import { chown, mkdtemp, rm } from "node:fs/promises";
import { existsSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { freePort } from "@/lib/process/free-port";
import { postgresIds } from "@/lib/process/postgres-user";

/**
 * A PostgreSQL server of the test's own (initdb in a temporary folder, on a
 * free port), so that a test can crash PostgreSQL itself (`pg_ctl stop -m
 * immediate`: no checkpoint, no flush, as a power cut would leave it) and
 * restart it, without touching the server the other tests share. Needs the
 * server's binaries (Debian's postgresql package). initdb refuses to run as
 * root, so as root it runs as the `postgres` user.
 */
export interface ThrowawayPostgres {
  url: string;
  /** Stops it at once: committed transactions whose WAL was not yet flushed are lost. */
  crash(): Promise<void>;
  start(): Promise<void>;
  remove(): Promise<void>;
}

const run = promisify(execFile);

export function postgresBinaries(): string | undefined {
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) return undefined;
  const newest = readdirSync(root).sort((a, b) => Number(b) - Number(a))[0];
  const bin = newest && path.join(root, newest, "bin");
  return bin && existsSync(path.join(bin, "pg_ctl")) ? bin : undefined;
}

/**
 * @param settings extra server settings (`-c name=value`): a crash test
 *   keeps asynchronous commits unflushed for longer with a long
 *   `wal_writer_delay` and no background writer.
 */
export async function startThrowawayPostgres(
  settings: Record<string, string> = {},
): Promise<ThrowawayPostgres> {
  const bin = postgresBinaries();
  if (!bin)
    throw new Error(
      "PostgreSQL's server binaries (initdb, pg_ctl) are not installed: install Debian's postgresql package.",
    );
  const asRoot = process.getuid?.() === 0;
  const dir = await mkdtemp(path.join(tmpdir(), "oncepay-pg-"));
  if (asRoot) {
    const postgres = await postgresIds();
    await chown(dir, postgres.uid, postgres.gid);
  }
  const dataDir = path.join(dir, "data");
  const port = await freePort();
  const as = async (command: string, args: string[]) => {
    const [file, argv] = asRoot
      ? ["runuser", ["-u", "postgres", "--", path.join(bin, command), ...args]]
      : [path.join(bin, command), args];
    await run(file, argv, { cwd: dir });
  };
  const extra = Object.entries(settings)
    .map(([name, value]) => ` -c ${name}=${value}`)
    .join("");
  const options = `-p ${port} -c listen_addresses=127.0.0.1 -k ${dir} -c fsync=on -c synchronous_commit=on${extra}`;
  const pgCtl = (...args: string[]) =>
    as("pg_ctl", ["-D", dataDir, "-l", path.join(dir, "server.log"), ...args]);

  await as("initdb", ["-D", dataDir, "-U", "postgres", "--auth=trust", "--no-sync"]);
  await pgCtl("-o", options, "-w", "start");
  return {
    url: `postgresql://postgres@127.0.0.1:${port}/postgres`,
    crash: () => pgCtl("-m", "immediate", "-w", "stop"),
    start: () => pgCtl("-o", options, "-w", "start"),
    async remove() {
      await pgCtl("-m", "immediate", "-w", "stop").catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
    },
  };
}
