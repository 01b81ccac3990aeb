/**
 * `npm start`'s first step: run `next build` only when the production build
 * is missing or older than its sources (lib/build/freshness.ts), so a
 * restart is quick and a fresh clone or an edit still gets a build.
 * `npm run build` always builds.
 */
import { spawnSync } from "node:child_process";
import { buildFreshness } from "../lib/build/freshness.ts";

const freshness = await buildFreshness(process.cwd());
if (!freshness.stale) {
  console.log("[oncepay] build: up to date (npm run build forces one)");
  process.exit(0);
}
console.log(`[oncepay] build: ${freshness.reason}; running npm run build`);
// The build script builds the engine's package first, then the app on it.
const build = spawnSync("npm", ["run", "build"], { stdio: "inherit" });
process.exit(build.status ?? 1);
