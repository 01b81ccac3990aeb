import { randomBytes } from "node:crypto";
import { link, mkdir, readFile, unlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { MIN_SESSION_SECRET_LENGTH } from "@/lib/env";

/**
 * A secret the launcher makes when none is given: made once and kept in a
 * file only its owner reads, so it outlives a restart, and every instance
 * started from this checkout agrees. Several launchers starting at once
 * agree too: the first to create the file wins, and the others read it.
 * The session secret is kept so (sessions outlive a restart), and so is the
 * payment simulator's admin key (the tools that use it read the file).
 */
export async function keptSecret(file: string, what = "session secret"): Promise<string> {
  const existing = await readSecret(file, what);
  if (existing !== undefined) return existing;
  await mkdir(path.dirname(path.resolve(file)), { recursive: true });
  // Written aside, then linked into place: the file appears whole or not at
  // all, and a link fails if another launcher's is already there.
  const secret = randomBytes(32).toString("base64url");
  const draft = `${file}.${process.pid}.${randomBytes(4).toString("hex")}`;
  await writeFile(draft, secret, { mode: 0o600 });
  try {
    await link(draft, file);
    return secret;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    return (await readSecret(file, what))!;
  } finally {
    await unlink(draft);
  }
}

async function readSecret(file: string, what: string): Promise<string | undefined> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  const secret = text.trim();
  if (secret.length < MIN_SESSION_SECRET_LENGTH) {
    throw new Error(
      `${file} holds no usable ${what} (under ${MIN_SESSION_SECRET_LENGTH} characters); delete it and start again.`,
    );
  }
  return secret;
}
