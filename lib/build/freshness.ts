import { readdir, stat } from "node:fs/promises";
import path from "node:path";

/**
 * Whether the production build in `.next/` still matches the sources, so
 * that `npm start` builds only when it must: a build takes half a minute on
 * a small machine, a restart should not. The rule is make's: the build is
 * stale when it is missing or when any input is newer than it. Modification
 * times, not hashes: a checkout or an edit touches the file, so a changed
 * input is never missed; a file touched without a change costs one build.
 */

/** What goes into `next build`, relative to the project root. Tests sit beside the code but are not built. */
export const BUILD_INPUTS = [
  "app",
  "components",
  "lib",
  "public",
  "proxy.ts",
  "instrumentation.ts",
  "next.config.ts",
  "postcss.config.mjs",
  "tsconfig.json",
  "package.json",
  "package-lock.json",
] as const;

/** Written by `next build` when it succeeds, and only then. */
const BUILD_STAMP = path.join(".next", "BUILD_ID");

const NOT_BUILT = /\.test\.tsx?$/;

export type BuildFreshness = { stale: false } | { stale: true; reason: string };

export async function buildFreshness(root: string): Promise<BuildFreshness> {
  const builtAt = await modifiedAt(path.join(root, BUILD_STAMP));
  if (builtAt === undefined) return { stale: true, reason: "no production build yet" };
  for (const input of BUILD_INPUTS) {
    const newer = await firstNewerThan(path.join(root, input), builtAt);
    if (newer) return { stale: true, reason: `${path.relative(root, newer)} changed since the last build` };
  }
  return { stale: false };
}

async function modifiedAt(file: string): Promise<number | undefined> {
  try {
    return (await stat(file)).mtimeMs;
  } catch {
    return undefined;
  }
}

/** The first file at or under `entry` modified after `time`; undefined if none (or `entry` does not exist). */
async function firstNewerThan(entry: string, time: number): Promise<string | undefined> {
  let info;
  try {
    info = await stat(entry);
  } catch {
    return undefined;
  }
  if (info.isFile()) return !NOT_BUILT.test(entry) && info.mtimeMs > time ? entry : undefined;
  if (!info.isDirectory()) return undefined;
  for (const child of await readdir(entry)) {
    const newer = await firstNewerThan(path.join(entry, child), time);
    if (newer) return newer;
  }
  return undefined;
}
