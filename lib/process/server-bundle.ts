import { randomUUID } from "node:crypto";
import { mkdir, rename, writeFile } from "node:fs/promises";
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
 *
 * Several launchers start at once (the cluster's instances, the tests'
 * apps), all bundling to the same file. Written in place, one launcher's
 * write truncated the file while another's Node was reading it: Node ran
 * an empty module and exited 0, without a word, and the instance was gone.
 * So each launcher writes a file of its own and renames it over the
 * bundle: a rename replaces it whole, and a reader sees one whole bundle.
 */
export async function bundleServer(): Promise<string> {
  const outfile = path.resolve("node_modules", ".cache", "oncepay", "serve.mjs");
  const result = await build({
    entryPoints: [path.resolve("scripts", "serve.mts")],
    outfile,
    write: false,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    packages: "external",
    logLevel: "warning",
  });
  const [bundle] = result.outputFiles;
  if (!bundle) throw new Error("esbuild made no bundle of scripts/serve.mts");
  await mkdir(path.dirname(outfile), { recursive: true });
  const ownFile = `${outfile}.${process.pid}.${randomUUID()}.tmp`;
  await writeFile(ownFile, bundle.contents);
  await rename(ownFile, outfile);
  return outfile;
}
