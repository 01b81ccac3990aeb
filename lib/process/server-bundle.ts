import path from "node:path";
import { build } from "esbuild";

/**
 * scripts/serve.mts, OncePay's HTTP server around Next.js, bundled into one
 * plain JavaScript file for Node to run without a TypeScript loader. Run
 * under tsx (`--import tsx`), every module Next.js requires went through
 * tsx's hooks, and the server took about a second longer to give its first
 * answer (2.4 s against 1.3 s), which every start and every test's app paid.
 * The bundle holds only our code; `next` and other packages stay imports.
 * Made afresh at each start (a few tens of milliseconds), so it never runs
 * stale code.
 */
export async function bundleServer(): Promise<string> {
  const outfile = path.resolve("node_modules", ".cache", "oncepay", "serve.mjs");
  await build({
    entryPoints: [path.resolve("scripts", "serve.mts")],
    outfile,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    packages: "external",
    logLevel: "warning",
  });
  return outfile;
}
