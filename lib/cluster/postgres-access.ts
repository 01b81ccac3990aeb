import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { stat } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { POSTGRES_USER, runsAsRoot } from "@/lib/process/postgres-user";

/**
 * Started as root, Patroni, PostgreSQL and PgBouncer run as the postgres
 * user (lib/process/postgres-user.ts), and reach their files as that user:
 * through every folder above them. A folder postgres cannot enter (a
 * checkout or TMPDIR under a 0700 home, say) stops them at start-up, and
 * what the cluster then saw was a member that never became ready. So each
 * part checks, before it starts anything, that postgres can use what it is
 * given, and fails at once naming the path and the folder in the way.
 *
 * The check runs as postgres itself (`test` under setpriv, as the parts
 * are started), so it answers as the kernel will: owners, groups, modes
 * and ACLs alike.
 */
export type Use = "read" | "write" | "run";

export interface NeededPath {
  /** What it is, for the error: "pg1's Patroni configuration". */
  what: string;
  path: string;
  /** read: a file; write: a folder to create files in; run: a program. */
  use: Use;
}

const SETPRIV = "/usr/bin/setpriv";

// One shell for every check: pairs of (test, path) as arguments, never
// spliced into the script, each answered "yes" or "no" on a line.
const CHECKS = `while [ $# -gt 0 ]; do
  case $1 in
    enter) test -d "$2" && test -x "$2" ;;
    read) test -r "$2" ;;
    write) test -d "$2" && test -w "$2" && test -x "$2" ;;
    run) test -f "$2" && test -x "$2" ;;
  esac && echo yes || echo no
  shift 2
done`;

/** Fails, naming each path postgres cannot use and why, unless it can use them all. */
export async function assertPostgresCanUse(needed: readonly NeededPath[]): Promise<void> {
  const problems = await postgresAccessProblems(needed);
  if (problems.length > 0)
    throw new Error(
      `The ${POSTGRES_USER} user, which runs the cluster's PostgreSQL parts, cannot use what they need:\n` +
        problems.map((problem) => `  - ${problem}`).join("\n") +
        `\nLet others pass through the folder named (chmod o+x), or start from a folder ${POSTGRES_USER} can reach (TMPDIR decides where the cluster's files go).`,
    );
}

/** One sentence per path postgres cannot use: what it is, and the folder or mode that stops it. */
export async function postgresAccessProblems(needed: readonly NeededPath[]): Promise<string[]> {
  // Not root: every part runs as this user, who made the files.
  if (!runsAsRoot() || !existsSync(SETPRIV)) return [];
  const checks = new Map<string, boolean>();
  const key = (test: string, target: string) => `${test}\0${target}`;
  for (const { path: target, use } of needed) {
    for (const folder of foldersAbove(target)) checks.set(key("enter", folder), false);
    checks.set(key(use, target), false);
  }
  const answers = await asPostgres([...checks.keys()].flatMap((entry) => entry.split("\0")));
  [...checks.keys()].forEach((entry, index) => checks.set(entry, answers[index] === "yes"));

  const problems: string[] = [];
  for (const { what, path: target, use } of needed) {
    const blocking = foldersAbove(target).find((folder) => !checks.get(key("enter", folder)));
    if (blocking !== undefined)
      problems.push(`${what} ${target}: cannot enter ${blocking} (${await describe(blocking)})`);
    else if (!checks.get(key(use, target)))
      problems.push(`${what} ${target}: cannot ${use} it (${await describe(target)})`);
  }
  return problems;
}

/** "/", "/tmp", "/tmp/x" for "/tmp/x/file": each folder one must enter to reach it. */
function foldersAbove(target: string): string[] {
  const folders: string[] = [];
  for (let folder = path.dirname(path.resolve(target)); ; folder = path.dirname(folder)) {
    folders.unshift(folder);
    if (folder === path.dirname(folder)) return folders;
  }
}

async function asPostgres(args: string[]): Promise<string[]> {
  const { stdout } = await promisify(execFile)(
    SETPRIV,
    [
      `--reuid=${POSTGRES_USER}`,
      `--regid=${POSTGRES_USER}`,
      "--init-groups",
      "--",
      "/bin/sh",
      "-c",
      CHECKS,
      "sh",
      ...args,
    ],
    // As the parts themselves start: in a folder postgres can enter.
    { cwd: "/" },
  );
  return stdout.split("\n");
}

async function describe(target: string): Promise<string> {
  const found = await stat(target).catch(() => undefined);
  if (!found) return "it does not exist";
  const mode = (found.mode & 0o7777).toString(8).padStart(4, "0");
  return `mode ${mode}, owner uid ${found.uid} gid ${found.gid}`;
}
