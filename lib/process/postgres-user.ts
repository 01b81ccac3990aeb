import { readFile } from "node:fs/promises";

/**
 * PostgreSQL and PgBouncer refuse to run as root. Started as root, they run
 * as the `postgres` user (Debian's packages make it), and whatever they read
 * or write must be theirs.
 */
export const POSTGRES_USER = "postgres";

export const runsAsRoot = (): boolean => process.getuid?.() === 0;

/** The postgres user's uid and gid, from /etc/passwd. */
export async function postgresIds(): Promise<{ uid: number; gid: number }> {
  const line = (await readFile("/etc/passwd", "utf8"))
    .split("\n")
    .find((entry) => entry.startsWith(`${POSTGRES_USER}:`));
  const [, , uid, gid] = line?.split(":") ?? [];
  if (uid === undefined || gid === undefined)
    throw new Error(`There is no user ${POSTGRES_USER} to run PostgreSQL and PgBouncer as`);
  return { uid: Number(uid), gid: Number(gid) };
}
