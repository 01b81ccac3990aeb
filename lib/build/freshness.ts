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
  "packages/idempotency/src",
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

// Tests, test support (never imported by the app: an ESLint rule), the
// protocol model and prose sit among the sources but are not built.
const NOT_BUILT = /(\.test\.tsx?|\.md|\.pml)$|^lib\/testing(\/|$)/;

export type BuildFreshness = { stale: false } | { stale: true; reason: string };

export async function buildFreshness(root: string): Promise<BuildFreshness> {
  const builtAt = await modifiedAt(path.join(root, BUILD_STAMP));
  if (builtAt === undefined) return { stale: true, reason: "no production build yet" };
  for (const input of BUILD_INPUTS) {
    const newer = await firstNewerThan(root, input, builtAt);
    if (newer)
      return { stale: true, reason: `${path.relative(root, newer)} changed since the last build` };
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

/** The first file at or under `relative` (to `root`) modified after `time`; undefined if none (or it does not exist). */
async function firstNewerThan(
  root: string,
  relative: string,
  time: number,
): Promise<string | undefined> {
  if (NOT_BUILT.test(relative.split(path.sep).join("/"))) return undefined;
  const entry = path.join(root, relative);
  let info;
  try {
    info = await stat(entry);
  } catch {
    return undefined;
  }
  if (info.isFile()) return info.mtimeMs > time ? entry : undefined;
  if (!info.isDirectory()) return undefined;
  for (const child of await readdir(entry)) {
    const newer = await firstNewerThan(root, path.join(relative, child), time);
    if (newer) return newer;
  }
  return undefined;
}
